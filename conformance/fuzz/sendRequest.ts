/**
 * One fuzz request on the wire: the body written out (JSON or other text, or a multipart form), sent without
 * following redirects, bounded in time, resent once when the server had just closed the idle pooled connection
 * it went out on (what every HTTP client does; a server that went down fails the resend too). Reports the
 * answer, how long it took, and the path the server saw (the URL parser folds `..` and `.` segments).
 */
import type { FuzzRequest } from './requestArbitrary.js'

const CLOSED_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET'])

export type Answer = { status: number; headers: Headers; text: string; ms: number; sentPath: string; retried: boolean }
export type NoAnswer = { error: string; refusedByClient: boolean; cut: boolean; ms: number; retried: boolean }

function bodyOf(request: FuzzRequest): string | FormData | undefined {
  if (!request.body) return undefined
  if ('text' in request.body) return request.body.text
  const form = new FormData()
  for (const p of request.body.parts) {
    if (p.filename !== undefined) form.append(p.name, new Blob([p.value]), p.filename)
    else form.append(p.name, p.value)
  }
  return form
}

export async function sendRequest(base: string, request: FuzzRequest, headers: Record<string, string>, options: { timeoutMs: number; cut?: AbortSignal }): Promise<Answer | NoAnswer> {
  const url = `${base.replace(/\/+$/, '')}${request.path}`
  const body = bodyOf(request)
  const t0 = Date.now()
  const once = async () => {
    const signal = options.cut ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.cut]) : AbortSignal.timeout(options.timeoutMs)
    const r = await fetch(url, { method: request.method, headers, body, redirect: 'manual', signal })
    return { r, text: await r.text() }
  }
  let retried = false
  try {
    let answer
    try {
      answer = await once()
    } catch (error) {
      if (options.cut?.aborted || !CLOSED_CONNECTION.has((error as { cause?: { code?: string } }).cause?.code ?? '')) throw error
      retried = true
      answer = await once()
    }
    const sent = new URL(url)
    return { status: answer.r.status, headers: answer.r.headers, text: answer.text, ms: Date.now() - t0, sentPath: `${sent.pathname}${sent.search}`, retried }
  } catch (error) {
    // fetch refuses some requests before sending them (a header value it cannot encode): not the server's doing
    const refusedByClient = error instanceof TypeError && !/fetch failed/.test(error.message)
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message
    return { error: cause, refusedByClient, cut: Boolean(options.cut?.aborted), ms: Date.now() - t0, retried }
  }
}

export const isAnswer = (a: Answer | NoAnswer): a is Answer => 'status' in a
