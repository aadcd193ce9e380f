/**
 * The fuzz run's reports: text for a terminal (the violations, each named check with its counts, the totals,
 * the coverage), JSON (everything, coverage included), and JUnit XML (one testcase per named check, a failure
 * when any exchange failed it, plus one per coverage dimension listing what was not reached).
 */
import { xml } from '../report.js'
import { CHECK_NAMES, CHECKS } from './checks.js'
import { formatCoverage } from './coverage.js'
import type { FuzzReport } from './fuzz.js'
import type { Violation } from './FuzzRun.js'

export function formatViolation(v: Violation, seed: number): string {
  const again = v.phase === 'drawn' ? `npm run fuzz -- --seed ${seed} --only ${v.index}` : `the failure file (npm run conformance -- --replay <file>)`
  return [
    `✗ ${v.check} — ${v.server} ${v.operation} [${v.phase}, tier ${v.tier}, ${v.mutation}] ${v.problem}${v.known ? ` (known: ${v.known})` : ''}`,
    `    ${v.request.method} ${v.request.path}${v.request.body ? ` ${v.request.body}` : ''}`,
    `    → ${v.status ?? 'no answer'} ${v.response ?? ''}`.trimEnd(),
    `    reproduce: ${again}`,
  ].join('\n')
}

export function formatChecks(report: Pick<FuzzReport, 'checks'>): string {
  const width = Math.max(...CHECK_NAMES.map((n) => n.length))
  return CHECK_NAMES.map((name) => {
    const c = report.checks[name]
    return `${c.failed ? '✗' : c.checked ? '✓' : '-'} ${name.padEnd(width)} ${String(c.checked).padStart(6)} checked, ${String(c.failed).padStart(4)} failed`
  }).join('\n')
}

export function formatFuzzText(report: FuzzReport): string {
  return [
    ...report.violations.slice(0, 50).map((v) => formatViolation(v, report.seed)),
    ...(report.violations.length > 50 ? [`… ${report.violations.length - 50} more violations`] : []),
    ...report.known.slice(0, 10).map((v) => formatViolation(v, report.seed)),
    formatChecks(report),
    `fuzz: ${report.requests} requests (${Object.entries(report.byServer).map(([s, n]) => `${s} ${n}`).join(', ')}) over ${report.operations} operations in ${report.seconds} s; statuses ${JSON.stringify(report.byStatus)}`,
    `fuzz: ${(report.requests / Math.max(report.seconds, 0.1)).toFixed(1)} requests/s; ${report.cutOff} cut off in flight at the time limit; ${report.retried} resent on a new connection`,
    `fuzz: stateful chains — ${Object.entries(report.chains).map(([root, c]) => `${root} ${c.runs}× (${Object.entries(c.statuses).map(([s, n]) => `${s}:${n}`).join(' ')}, ${c.steps} steps)`).join('; ') || 'none'}`,
    formatCoverage(report.coverage),
    `fuzz: ${report.violations.length} violations, ${report.known.length} known failures — seed ${report.seed}`,
  ].join('\n')
}

export function formatFuzzJunit(report: FuzzReport): string {
  const cases = CHECK_NAMES.map((name) => {
    const c = report.checks[name]
    const head = `    <testcase classname="fuzz.checks" name="${xml(`${name}: ${CHECKS[name]}`)}" time="0"`
    if (c.checked === 0) return `${head}>\n      <skipped message="no exchange this check applies to"/>\n    </testcase>`
    const failed = report.violations.filter((v) => v.check === name)
    if (failed.length === 0) return `${head}>\n      <system-out>${c.checked} checked</system-out>\n    </testcase>`
    return `${head}>\n      <failure message="${xml(`${c.failed} of ${c.checked} failed: ${failed[0]!.problem}`)}">${xml(failed.slice(0, 20).map((v) => formatViolation(v, report.seed)).join('\n'))}</failure>\n    </testcase>`
  })
  const cov = report.coverage
  const coverage = [
    ['operations exercised', cov.operations.missing, `${cov.operations.exercised}/${cov.operations.documented}`],
    ['links followed', cov.links.missing, `${cov.links.followed}/${cov.links.documented}`],
  ].map(([name, missing, figure]) => {
    const head = `    <testcase classname="fuzz.coverage" name="${xml(`${name as string} (${figure as string})`)}" time="0"`
    return (missing as string[]).length ? `${head}>\n      <system-out>${xml(`not reached:\n${(missing as string[]).join('\n')}`)}</system-out>\n    </testcase>` : `${head}/>`
  })
  const failures = cases.filter((c) => c.includes('<failure')).length
  const skipped = cases.filter((c) => c.includes('<skipped')).length
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="fuzz" tests="${cases.length + coverage.length}" failures="${failures}" skipped="${skipped}" errors="0">\n  <testsuite name="fuzz" tests="${cases.length + coverage.length}" failures="${failures}" skipped="${skipped}" errors="0" time="${report.seconds}">\n    <properties><property name="seed" value="${report.seed}"/><property name="requests" value="${report.requests}"/></properties>\n${[...cases, ...coverage].join('\n')}\n  </testsuite>\n</testsuites>\n`
}
