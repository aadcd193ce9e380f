/**
 * The checks that depend on what the request was: whether the document accepts it (judgeRequest.ts) and whether
 * the credentials it carried are ones the operation accepts.
 * - negative_data_rejection: a request the document refuses is never answered 2xx.
 * - positive_data_acceptance: a request the document accepts, with accepted credentials, is never refused as
 *   invalid — 415, 422, or the 400 of the server's request validation (the gateway's `invalid_request` "request
 *   does not match the API description", the model server's `<location> <path>: <message>`). A refusal for what
 *   the request means (an unknown nonce, a bad signature, a model that does not exist) is the API's business.
 * - ignored_auth: an operation whose every security alternative needs a credential, called with none or with
 *   garbage ones, is never answered 2xx (from its own machine, an operation marked
 *   `x-loopback-without-credentials` may be).
 */
import type { Server } from '../types.js'
import type { CheckResult } from './checks.js'
import type { Tier } from './fuzz.js'
import type { Judgement } from './judgeRequest.js'
import type { Operation } from './operations.js'

/** Security schemes each credential tier carries (`link`: whatever the link passed, taken as accepted). */
const CARRIES: Record<Exclude<Tier, 'link'>, ReadonlySet<string>> = {
  none: new Set(),
  garbage: new Set(),
  session: new Set(['sessionToken', 'sessionCookie']),
  bearer: new Set(['overlordBearer']),
}

/** The operation accepts the tier's credentials (an anonymous alternative accepts every tier). */
export function tierSatisfies(op: Pick<Operation, 'security'>, tier: Tier): boolean {
  if (op.security.length === 0 || tier === 'link') return true
  return op.security.some((alternative) => alternative.every((scheme) => CARRIES[tier].has(scheme)))
}

export function requiresCredentials(op: Pick<Operation, 'security'>): boolean {
  return op.security.length > 0 && op.security.every((alternative) => alternative.length > 0)
}

function messagesOf(text: string): string[] {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return []
  }
  if (!body || typeof body !== 'object') return []
  const b = body as { error?: unknown; message?: unknown; errors?: { detail?: { location?: unknown } }[] }
  const out: string[] = []
  if (typeof b.error === 'string') out.push(b.error)
  if (b.error && typeof b.error === 'object' && typeof (b.error as { message?: unknown }).message === 'string') out.push((b.error as { message: string }).message)
  if (typeof b.message === 'string') out.push(b.message)
  if (Array.isArray(b.errors) && typeof b.errors[0]?.detail?.location === 'string') out.push(`${b.errors[0].detail.location}: (registry validation)`)
  return out
}

/** The answer is the server's schema validation refusing the request. */
export function isValidationRefusal(server: Server, status: number, text: string): boolean {
  if (status === 415 || status === 422) return true
  if (status !== 400) return false
  const messages = messagesOf(text)
  if (server === 'gateway') return messages.some((m) => m.startsWith('request does not match the API description'))
  return messages.some((m) => /^(body|query|path|header|request)( \S+)?: /.test(m) || m === 'model is required')
}

export function inputChecks(p: { op: Operation; tier: Tier; judged: Judgement | undefined; status: number; text: string; loopback: boolean }): CheckResult[] {
  const results: CheckResult[] = []
  const ok = p.status >= 200 && p.status < 300
  if (p.judged?.conforms === false) {
    results.push(ok ? { check: 'negative_data_rejection', problem: `answered ${p.status} to a request the document refuses (${p.judged.problems.slice(0, 2).join('; ')})` } : { check: 'negative_data_rejection' })
  }
  if (p.judged?.conforms && tierSatisfies(p.op, p.tier)) {
    results.push(
      isValidationRefusal(p.op.server, p.status, p.text)
        ? { check: 'positive_data_acceptance', problem: `refused as invalid (${p.status}) a request the document accepts: ${p.text.slice(0, 200)}` }
        : { check: 'positive_data_acceptance' },
    )
  }
  // `x-loopback-without-credentials`: the document says a client on the server's own machine needs none.
  if (requiresCredentials(p.op) && (p.tier === 'none' || p.tier === 'garbage') && !(p.loopback && p.op.loopbackWithoutCredentials)) {
    results.push(ok ? { check: 'ignored_auth', problem: `answered ${p.status} without ${p.tier === 'none' ? 'credentials' : 'valid credentials'} (security: ${JSON.stringify(p.op.security)})` } : { check: 'ignored_auth' })
  }
  return results
}
