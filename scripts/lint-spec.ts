/**
 * `npm run lint:spec` — Redocly lint of both OpenAPI documents (rules in `redocly.yaml`, zero errors
 * allowed) and validation of `asyncapi/events.yaml` with @asyncapi/parser. Exits non-zero on any error
 * or on a missing document.
 *
 * The lint runs @redocly/openapi-core, the engine behind `redocly lint`, in process: the Redocly CLI
 * package also installs its docs renderer, React, faker and telemetry (~165 MB of the install, README
 * "Install size") and loads all of it even for `lint`.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Parser } from '@asyncapi/parser'
import { getLineColLocation, getTotals, lint, loadConfig, type NormalizedProblem } from '@redocly/openapi-core'
import { apis, repoRoot } from './generate.js'

export const asyncApiPath = 'asyncapi/events.yaml'

/** One problem as `redocly lint --format stylish` prints it: `file:line:col severity rule message`. */
function formatProblem(problem: NormalizedProblem): string {
  const where = problem.location[0]
  let at = '(document)'
  if (where) {
    const { start } = getLineColLocation(where)
    at = `${path.relative(repoRoot, where.source.absoluteRef)}:${start.line}:${start.col}`
  }
  return `${at}  ${problem.severity === 'error' ? 'error' : 'warning'}  ${problem.ruleId}  ${problem.message}`
}

/**
 * Lints one OpenAPI document with the rules of `redocly.yaml` — those of the API `alias` names there when
 * given (its own overrides), as `redocly lint <alias>` does; `ok` when no problem has error severity.
 */
export async function redoclyLintFile(file: string, alias?: string): Promise<{ ok: boolean; output: string }> {
  const config = await loadConfig({ configPath: path.join(repoRoot, 'redocly.yaml') })
  const problems = (await lint({ ref: file, config: config.forAlias(alias) })).filter((p) => !p.ignored)
  const totals = getTotals(problems)
  const lines = problems.map(formatProblem)
  lines.push(`${path.relative(repoRoot, file)}: ${totals.errors} error(s), ${totals.warnings} warning(s)`)
  return { ok: totals.errors === 0, output: `${lines.join('\n')}\n` }
}

/** Lints the API named `api` in `redocly.yaml` (its root document and its own rule overrides). */
export async function redoclyLint(api: string): Promise<{ ok: boolean; output: string }> {
  const config = await loadConfig({ configPath: path.join(repoRoot, 'redocly.yaml') })
  const root = config.resolvedConfig.apis?.[api]?.root
  if (!root) return { ok: false, output: `redocly.yaml names no api '${api}'\n` }
  return redoclyLintFile(path.join(repoRoot, root), api)
}

export interface AsyncApiIssue {
  severity: 'error' | 'warning' | 'info' | 'hint'
  message: string
  path: string
}

/** Validates the AsyncAPI document; returns every diagnostic with its severity. */
export async function validateAsyncApi(file = path.join(repoRoot, asyncApiPath)): Promise<AsyncApiIssue[]> {
  const parser = new Parser()
  const { diagnostics } = await parser.parse(readFileSync(file, 'utf8'), { source: file })
  const names = ['error', 'warning', 'info', 'hint'] as const
  return diagnostics.map((d) => ({
    severity: names[d.severity] ?? 'error',
    message: d.message,
    path: d.path.join('.'),
  }))
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href

if (invokedDirectly) {
  let failed = false
  for (const api of apis) {
    if (!existsSync(path.join(repoRoot, api.spec))) {
      console.error(`lint:spec: ${api.spec} is missing`)
      failed = true
      continue
    }
    const { ok, output } = await redoclyLint(api.name)
    process.stdout.write(output)
    if (!ok) {
      console.error(`lint:spec: ${api.spec} has lint errors`)
      failed = true
    }
  }
  if (!existsSync(path.join(repoRoot, asyncApiPath))) {
    console.error(`lint:spec: ${asyncApiPath} is missing`)
    failed = true
  } else {
    const issues = await validateAsyncApi()
    for (const i of issues) console.log(`${asyncApiPath} ${i.severity} ${i.path || '(root)'}: ${i.message}`)
    const errors = issues.filter((i) => i.severity === 'error')
    if (errors.length > 0) {
      console.error(`lint:spec: ${asyncApiPath} has ${errors.length} error(s)`)
      failed = true
    } else {
      console.log(`${asyncApiPath}: valid AsyncAPI (${issues.length} non-error diagnostic(s))`)
    }
  }
  if (failed) process.exit(1)
  console.log('lint:spec: all documents valid')
}
