/**
 * `npm run lint:spec` — Redocly lint of both OpenAPI documents (rules in `redocly.yaml`, zero errors
 * allowed) and validation of `asyncapi/events.yaml` with @asyncapi/parser. Exits non-zero on any error
 * or on a missing document.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Parser } from '@asyncapi/parser'
import { apis, repoRoot } from './generate.js'

export const asyncApiPath = 'asyncapi/events.yaml'

/** Runs `redocly lint <api>` offline; returns the exit status and the combined output. */
export function redoclyLint(api: string): { ok: boolean; output: string } {
  const bin = path.join(repoRoot, 'node_modules', '.bin', 'redocly')
  const run = spawnSync(bin, ['lint', api, '--format', 'stylish'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
  })
  return { ok: run.status === 0, output: `${run.stdout ?? ''}${run.stderr ?? ''}` }
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
    const { ok, output } = redoclyLint(api.name)
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
