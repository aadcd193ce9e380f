/**
 * Conformance runner: replays state machines written as tables of transitions
 * `(state, event, expected status, next state)` against any deployment, and checks every response against
 * the OpenAPI document (status documented, media type, JSON Schema 2020-12 of the body, required headers).
 * Machines are YAML files (format in `machines/gateway/arrivalGate.yaml`); the runner signs EIP-191
 * messages with generated wallets or with keys given on the command line.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type PrivateKeyAccount, generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { parse } from 'yaml'
import { createOpenApiRouter, loadOpenApiDocument, type OpenApiRouter } from '../src/shared/http/index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '..')

export type Row = {
  id: string
  state: string
  event: string
  request: { method: string; path: string; headers?: Record<string, string>; body?: unknown }
  sign?: { key: string; message: string; as: string }
  expect: {
    status: number
    body?: Record<string, unknown>
    headers?: Record<string, string>
    bodyContains?: string
    bodyNotContains?: string
  }
  capture?: Record<string, string>
  next: string
  mock?: boolean
  [extra: string]: unknown
}

export type Machine = { machine: string; seed?: string; initial: string; states?: string[]; rows: Row[] }

export type RowResult = {
  machine: string
  id: string
  from: string
  event: string
  to: string
  status: number | undefined
  ok: boolean
  skipped?: string
  problems: string[]
}

export type RunOptions = {
  target: string
  /** Only rows marked `mock: true` (for the Prism mock, which cannot keep state or verify signatures). */
  mockOnly?: boolean
  /** Extra signing keys by name (`--key overlord=0x…`). */
  keys?: Record<string, `0x${string}`>
  vars?: Record<string, string>
  /** Check responses against this document (default `openapi/gateway.yaml`). */
  documentPath?: string
}

export function loadMachine(file: string): Machine {
  return parse(readFileSync(file, 'utf8')) as Machine
}

/** The gateway machines of this folder, in replay order. */
export const gatewayMachineFiles = ['arrivalGate.yaml', 'login.yaml'].map((f) => path.join(here, 'machines', 'gateway', f))

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m)
  if (Array.isArray(value)) return value.map((v) => fill(v, vars))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]))
  return value
}

function subsetProblems(actual: unknown, expected: Record<string, unknown>, where = 'body'): string[] {
  if (!actual || typeof actual !== 'object') return [`${where} is not an object`]
  const problems: string[] = []
  for (const [k, v] of Object.entries(expected)) {
    const a = (actual as Record<string, unknown>)[k]
    if (v && typeof v === 'object' && !Array.isArray(v)) problems.push(...subsetProblems(a, v as Record<string, unknown>, `${where}.${k}`))
    else if (a !== v) problems.push(`${where}.${k} = ${JSON.stringify(a)}, expected ${JSON.stringify(v)}`)
  }
  return problems
}

function pick(source: { body: unknown; headers: Headers }, pathExpr: string): string | undefined {
  const [root, ...rest] = pathExpr.split('.')
  if (root === 'header') return source.headers.get(rest.join('.')) ?? undefined
  let value: unknown = source.body
  for (const key of rest) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** Checks one response against the document; CORS preflights are outside it. */
export function documentProblems(router: OpenApiRouter, method: string, requestPath: string, status: number, headers: Headers, text: string): string[] {
  if (method === 'OPTIONS') return []
  const contentType = headers.get('content-type') ?? undefined
  let body: unknown = text === '' ? undefined : text
  if (contentType && /json/.test(contentType) && text !== '') {
    try {
      body = JSON.parse(text)
    } catch {
      return ['body is not valid JSON']
    }
  }
  const headerRecord: Record<string, string> = {}
  headers.forEach((value, name) => {
    headerRecord[name] = value
  })
  const result = { status, headers: headerRecord, body, contentType }
  const operation = router.matchOperation(method, requestPath.split('?')[0]!)
  if (operation) return router.responseValidator.validate(operation.definition as never, result, method.toLowerCase())
  // Outside every operation: the gate's and the router's own answers.
  if (status === 302) return headers.get('location')?.startsWith('/login?from=') ? [] : ['302 without a /login location']
  if (status === 401) return router.responseValidator.validateComponent('AuthRequired', body)
  if (status === 404 || status === 405 || status === 429) return router.responseValidator.validateComponent('Error', body)
  return [`${method} ${requestPath} is not in the document (status ${status})`]
}

export async function runMachine(machine: Machine, options: RunOptions, router: OpenApiRouter): Promise<RowResult[]> {
  const wallet = privateKeyToAccount(generatePrivateKey())
  const other = privateKeyToAccount(generatePrivateKey())
  const accounts: Record<string, PrivateKeyAccount> = { wallet, other }
  for (const [name, key] of Object.entries(options.keys ?? {})) accounts[name] = privateKeyToAccount(key)
  const vars: Record<string, string> = {
    wallet: wallet.address,
    other_wallet: other.address,
    origin: new URL(options.target).origin,
    ...Object.fromEntries(Object.entries(accounts).map(([n, a]) => [`${n}_address`, a.address])),
    ...options.vars,
  }
  let state = machine.initial
  const results: RowResult[] = []
  for (const row of machine.rows) {
    const base = { machine: machine.machine, id: row.id, from: row.state, event: row.event, to: row.next }
    if (options.mockOnly && !row.mock) {
      results.push({ ...base, status: undefined, ok: true, skipped: 'needs the live service', problems: [] })
      continue
    }
    const problems: string[] = []
    if (!options.mockOnly && row.state !== state) problems.push(`table out of order: machine is in ${state}, row starts in ${row.state}`)
    if (row.sign) {
      const account = accounts[row.sign.key]
      if (!account) problems.push(`no key named ${row.sign.key}`)
      else vars[row.sign.as] = await account.signMessage({ message: fill(row.sign.message, vars) as string })
    }
    const request = fill(row.request, vars) as Row['request']
    const headers: Record<string, string> = { ...(request.headers ?? {}) }
    if (request.body !== undefined) headers['content-type'] ??= 'application/json'
    let status: number | undefined
    try {
      const response = await fetch(`${options.target.replace(/\/$/, '')}${request.path}`, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: 'manual',
      })
      status = response.status
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON
      }
      if (status !== row.expect.status) problems.push(`status ${status}, expected ${row.expect.status}: ${text.slice(0, 160)}`)
      else {
        if (row.expect.body) problems.push(...subsetProblems(body, row.expect.body))
        for (const [name, expected] of Object.entries(row.expect.headers ?? {})) {
          const actual = response.headers.get(name)
          const ok = expected.startsWith('/') && expected.endsWith('/') && expected.length > 1 ? actual !== null && new RegExp(expected.slice(1, -1)).test(actual) : actual === expected
          if (!ok) problems.push(`header ${name} = ${JSON.stringify(actual)}, expected ${expected}`)
        }
        if (row.expect.bodyContains && !text.includes(fill(row.expect.bodyContains, vars) as string)) problems.push(`body lacks ${row.expect.bodyContains}`)
        if (row.expect.bodyNotContains && text.includes(row.expect.bodyNotContains)) problems.push(`body contains ${row.expect.bodyNotContains}`)
        for (const [name, expr] of Object.entries(row.capture ?? {})) {
          const value = pick({ body, headers: response.headers }, expr)
          if (value === undefined) problems.push(`cannot capture ${name} from ${expr}`)
          else vars[name] = value
        }
      }
      problems.push(...documentProblems(router, request.method, request.path, status, response.headers, text).map((p) => `document: ${p}`))
    } catch (error) {
      problems.push(`request failed: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (problems.length === 0) state = row.next
    results.push({ ...base, status, ok: problems.length === 0, problems })
  }
  return results
}

/** Replays every machine file in order. */
export async function runMachines(files: string[], options: RunOptions): Promise<RowResult[]> {
  const document = loadOpenApiDocument(options.documentPath ?? path.join(repoRoot, 'openapi', 'gateway.yaml'))
  const router = createOpenApiRouter({ document, handlers: {}, responseValidation: 'off' })
  const results: RowResult[] = []
  for (const file of files) results.push(...(await runMachine(loadMachine(file), options, router)))
  return results
}

export function formatResults(results: RowResult[]): string {
  return results
    .map((r) => {
      const mark = r.skipped ? '-' : r.ok ? '✓' : '✗'
      const line = `${mark} ${r.machine} ${r.id}  ${r.from} --[${r.event}]--> ${r.to}  ${r.status ?? ''}${r.skipped ? ` (skipped: ${r.skipped})` : ''}`
      return r.problems.length ? `${line}\n${r.problems.map((p) => `    ${p}`).join('\n')}` : line
    })
    .join('\n')
}
