/**
 * Reports of a conformance run: text for a terminal (one line per row, details under failed rows, counts per
 * machine), JSON (every row with its seed section, exchanges, expected value, problems), and JUnit XML (one
 * testsuite per machine, a failure per failed row, `<skipped message=reason>` per skipped row).
 */
import type { RowResult } from './types.js'

const label = (r: RowResult) => `${r.id}${r.variant ? ` [${r.variant}]` : ''}`

export type MachineCounts = { machine: string; seed: string; rows: number; passed: number; failed: number; skipped: number }

export function countsByMachine(results: RowResult[]): MachineCounts[] {
  const byMachine = new Map<string, MachineCounts>()
  for (const r of results) {
    let c = byMachine.get(r.machine)
    if (!c) byMachine.set(r.machine, (c = { machine: r.machine, seed: r.seed, rows: 0, passed: 0, failed: 0, skipped: 0 }))
    c.rows++
    c[r.outcome]++
  }
  return [...byMachine.values()]
}

/** What the report shows of one failed row: seed section, request, expected, actual, schema errors. */
export function rowDetails(r: RowResult): string[] {
  const lines = [`seed ${r.seed}; ${r.from} --[${r.event}]--> ${r.to}`]
  if (r.expected !== undefined) lines.push(`expected: ${JSON.stringify(r.expected)}`)
  for (const e of r.exchanges) {
    lines.push(`request: ${e.method} ${e.path}${e.requestBody ? ` ${e.requestBody}` : ''}`)
    lines.push(`actual: ${e.status ?? 'no answer'} ${e.responseBody ?? ''}`.trimEnd())
    for (const s of e.schemaErrors) lines.push(`schema error: ${s}`)
  }
  for (const p of r.problems) lines.push(`problem: ${p}`)
  return lines
}

export function formatText(results: RowResult[]): string {
  const lines: string[] = []
  for (const r of results) {
    const mark = r.outcome === 'passed' ? '✓' : r.outcome === 'failed' ? '✗' : '-'
    lines.push(`${mark} ${r.machine} ${label(r)}  ${r.from} --[${r.event}]--> ${r.to}${r.outcome === 'skipped' ? `  (skipped: ${r.reason})` : ''}`)
    if (r.outcome === 'failed') lines.push(...rowDetails(r).map((l) => `    ${l}`))
  }
  lines.push('')
  for (const c of countsByMachine(results)) lines.push(`${c.machine.padEnd(22)} ${String(c.rows).padStart(3)} rows: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped  (seed ${c.seed})`)
  const total = (o: RowResult['outcome']) => results.filter((r) => r.outcome === o).length
  lines.push(`total: ${results.length} rows, ${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped`)
  return lines.join('\n')
}

export function formatJson(results: RowResult[], meta: Record<string, unknown>): string {
  return `${JSON.stringify({ ...meta, machines: countsByMachine(results), rows: results }, null, 2)}\n`
}

/** Text as XML character data or an attribute value (characters XML cannot carry become U+FFFD). */
export const xml = (s: string) =>
  s
    .replace(/[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd]/gu, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')

export function formatJunit(results: RowResult[], name = 'conformance'): string {
  const suites = countsByMachine(results).map((c) => {
    const rows = results.filter((r) => r.machine === c.machine)
    const time = rows.reduce((t, r) => t + r.ms, 0) / 1000
    const cases = rows.map((r) => {
      const head = `    <testcase classname="${xml(`${name}.${r.machine}`)}" name="${xml(`${label(r)} ${r.from} -> ${r.to}: ${r.event}`)}" time="${r.ms / 1000}"`
      if (r.outcome === 'skipped') return `${head}>\n      <skipped message="${xml(r.reason ?? '')}"/>\n    </testcase>`
      if (r.outcome === 'failed') return `${head}>\n      <failure message="${xml(r.problems[0] ?? 'failed')}">${xml(rowDetails(r).join('\n'))}</failure>\n    </testcase>`
      return `${head}/>`
    })
    return `  <testsuite name="${xml(c.machine)}" tests="${c.rows}" failures="${c.failed}" skipped="${c.skipped}" errors="0" time="${time}">\n    <properties><property name="seed" value="${xml(c.seed)}"/></properties>\n${cases.join('\n')}\n  </testsuite>`
  })
  const failed = results.filter((r) => r.outcome === 'failed').length
  const skipped = results.filter((r) => r.outcome === 'skipped').length
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(name)}" tests="${results.length}" failures="${failed}" skipped="${skipped}" errors="0">\n${suites.join('\n')}\n</testsuites>\n`
}
