/**
 * Driver `http`: each row is one request and its expected response, replayed in order; the machine's state
 * must be the row's `from` (an earlier failed row leaves it behind, and later rows report it).
 * - `request`: method, path, headers, JSON body; `{{var}}` is filled from the run's variables (`wallet`,
 *   `other_wallet`, `origin`, `<key>_address` and `<key>_lower` (the address in lower case), the machine's
 *   `vars`, `--var`, and values captured earlier).
 * - `sign`: before the request, sign `message` (EIP-191) with the key `key` (`wallet`, `other`, or a target
 *   key) and store the signature as the variable `as`.
 * - `siwx`: before the request, make a `sign-in-with-x` proof (CAIP-122, conformance/siwxProof.ts) with the key
 *   `key` for `resource` on `origin` and chain `chainId`, and store its header value as the variable `as`.
 *   A row whose `sign`/`siwx` key, or a key of its `keys`, the target lacks is skipped with the reason.
 * - `expect`: `status`, `body` subset, `headers` (exact value or /regex/), `bodyContains`, `bodyNotContains`.
 * - `capture`: variables read from the response (`body.a.b`, `header.name`; `… =~ /re/`: the regex's first group
 *   of that value, e.g. the origin a sign-in message names).
 * - `poll`: `{ within, every }` — resend until `expect` holds, bounded (an expiry observed by the next request).
 */
import type { PrivateKeyAccount } from 'viem/accounts'
import type { Reply } from '../DocumentClient.js'
import type { Driver } from '../runner.js'
import { siwxProofHeader } from '../siwxProof.js'
import type { Expect, Row } from '../types.js'

type HttpRow = Row & {
  request: { method: string; path: string; headers?: Record<string, string>; body?: unknown }
  sign?: { key: string; message: string; as: string }
  siwx?: { key: string; as: string; origin: string; resource: string; chainId: string }
  /** Keys the row needs besides its own `sign`/`siwx` one (a row that continues a signed one). */
  keys?: string[]
  capture?: Record<string, string>
  /**
   * For an event that is a time (an expiry): the request is sent again every `every` ms (default 50) until
   * `expect` holds, at most `within` ms; the row fails when it never does. Every reply is checked against the
   * document. A timer's exact firing against the next request is a race on a loaded machine; the bound is not.
   */
  poll?: { within: number; every?: number }
}

export function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => (Object.hasOwn(vars, k) ? vars[k]! : m))
  if (Array.isArray(value)) return value.map((v) => fill(v, vars))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]))
  return value
}

export function subsetProblems(actual: unknown, expected: Record<string, unknown>, where = 'body'): string[] {
  if (!actual || typeof actual !== 'object') return [`${where} is not an object`]
  const problems: string[] = []
  for (const [k, v] of Object.entries(expected)) {
    const a = Object.hasOwn(actual, k) ? (actual as Record<string, unknown>)[k] : undefined
    if (v && typeof v === 'object' && !Array.isArray(v)) problems.push(...subsetProblems(a, v as Record<string, unknown>, `${where}.${k}`))
    else if (a !== v) problems.push(`${where}.${k} = ${JSON.stringify(a)}, expected ${JSON.stringify(v)}`)
  }
  return problems
}

function pick(reply: Reply, expr: string): string | undefined {
  const [pathExpr, pattern] = expr.split(/\s+=~\s+/) as [string, string | undefined]
  const value = pickPath(reply, pathExpr)
  if (pattern === undefined || value === undefined) return value
  return new RegExp(pattern.replace(/^\/|\/$/g, '')).exec(value)?.[1]
}

function pickPath(reply: Reply, pathExpr: string): string | undefined {
  const [root, ...rest] = pathExpr.split('.')
  if (root === 'header') return reply.headers.get(rest.join('.')) ?? undefined
  let value: unknown = reply.body
  for (const key of rest) value = value && typeof value === 'object' && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** Compares a reply with `expect` (status first; the rest only when the status is right). */
export function expectProblems(reply: Reply, expect: Expect | undefined, vars: Record<string, string>): string[] {
  if (!expect) return []
  if (expect.status !== undefined && reply.status !== expect.status) return [`status ${reply.status}, expected ${expect.status}: ${reply.text.slice(0, 200)}`]
  const problems: string[] = []
  if (expect.error !== undefined && reply.body?.error !== expect.error) problems.push(`error ${String(reply.body?.error)}, expected ${expect.error}`)
  if (expect.body) problems.push(...subsetProblems(reply.body, fill(expect.body, vars) as Record<string, unknown>))
  if (expect.headers && !Array.isArray(expect.headers)) {
    for (const [name, expected] of Object.entries(expect.headers)) {
      const actual = reply.headers.get(name)
      const ok = expected.startsWith('/') && expected.endsWith('/') && expected.length > 1 ? actual !== null && new RegExp(expected.slice(1, -1)).test(actual) : actual === expected
      if (!ok) problems.push(`header ${name} = ${JSON.stringify(actual)}, expected ${expected}`)
    }
  }
  if (Array.isArray(expect.headers)) for (const h of expect.headers) if (!reply.headers.get(h)) problems.push(`missing header ${h}`)
  if (expect.bodyKeys) for (const k of expect.bodyKeys) if (!(reply.body && typeof reply.body === 'object' && Object.hasOwn(reply.body, k))) problems.push(`body lacks ${k}`)
  if (expect.bodyContains && !reply.text.includes(fill(expect.bodyContains, vars) as string)) problems.push(`body lacks ${fill(expect.bodyContains, vars)}`)
  if (expect.bodyNotContains && reply.text.includes(fill(expect.bodyNotContains, vars) as string)) problems.push(`body contains ${fill(expect.bodyNotContains, vars)}`)
  if (expect.contentType && !(reply.headers.get('content-type') ?? '').startsWith(expect.contentType)) problems.push(`content-type ${reply.headers.get('content-type')}, expected ${expect.contentType}`)
  return problems
}

export const httpDriver: Driver = ({ machine, target, client, random, vars }) => {
  const accounts = new Map<string, PrivateKeyAccount>([
    ['wallet', random.account()],
    ['other', random.account()],
    ...Object.entries(target.keys),
  ])
  const server = machine.server
  const base = target.urls[server]
  Object.assign(vars, {
    wallet: accounts.get('wallet')!.address,
    other_wallet: accounts.get('other')!.address,
    ...(base ? { origin: new URL(base).origin, host: new URL(base).host } : {}),
    ...Object.fromEntries([...accounts].map(([n, a]) => [`${n}_address`, a.address])),
    // how the gateway writes a wallet in its answers (lower case)
    ...Object.fromEntries([...accounts].map(([n, a]) => [`${n}_lower`, a.address.toLowerCase()])),
    ...target.vars,
  })
  let state = machine.initial ?? machine.rows[0]?.from
  return {
    missing(original) {
      const row = original as HttpRow
      const keys = [...new Set([...(row.keys ?? []), row.sign?.key, row.siwx?.key])].filter((k): k is string => k !== undefined && !accounts.has(k))
      return keys.length ? `no key ${keys.map((k) => `${k} (--key ${k}=0x…)`).join(', ')}` : undefined
    },
    async run(original, _variant, problems) {
      const row = original as HttpRow
      if (!target.mock && row.from !== state) problems.push(`table out of order: machine is in ${state}, row starts in ${row.from}`)
      if (row.sign) {
        const account = accounts.get(row.sign.key)
        if (!account) throw new Error(`no key named ${row.sign.key}`)
        vars[row.sign.as] = await account.signMessage({ message: fill(row.sign.message, vars) as string })
      }
      if (row.siwx) {
        const { key, as, origin, resource, chainId } = fill(row.siwx, vars) as NonNullable<HttpRow['siwx']>
        vars[as] = await siwxProofHeader(accounts.get(key)!, origin, resource, chainId)
      }
      const request = fill(row.request, vars) as HttpRow['request']
      const mockHeaders = typeof row.mock === 'object' && target.mock ? row.mock.headers : undefined
      const send = () => client.call(server, request.method, request.path, { headers: { ...request.headers, ...mockHeaders }, json: request.body })
      let reply = await send()
      let found = expectProblems(reply, row.expect, vars)
      const deadline = row.poll && !target.mock ? Date.now() + row.poll.within : 0
      while (found.length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, row.poll!.every ?? 50))
        reply = await send()
        found = expectProblems(reply, row.expect, vars)
      }
      if (found.length > 0 && row.poll && !target.mock) found = found.map((p) => `${p} (still after ${row.poll!.within} ms)`)
      problems.push(...found)
      if (found.length === 0) {
        for (const [name, expr] of Object.entries(row.capture ?? {})) {
          const value = pick(reply, expr)
          if (value === undefined) problems.push(`cannot capture ${name} from ${expr}`)
          else vars[name] = value
        }
      }
      if (problems.length === 0) state = row.to
    },
  }
}
