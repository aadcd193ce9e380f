/**
 * The code and words of an error body, whichever shape the gateway answered in: the spec's `{error, message}`,
 * the arrival gate's `{code, from}` (401 `auth_required` on a path that is no public route — where a `--gateway`
 * with a wrong path lands), or OpenAI's `{error: {code, message}}`. What the body does not say stays undefined,
 * so the caller falls back to the status, never drops what the gateway did say.
 */
export type ErrorBody = { code: string | undefined; message: string | undefined }

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

export function errorBodyOf(body: unknown): ErrorBody {
  if (typeof body !== 'object' || body === null) return { code: undefined, message: undefined }
  const b = body as Record<string, unknown>
  if (typeof b.error === 'object' && b.error !== null) {
    const nested = b.error as Record<string, unknown>
    return { code: text(nested.code) ?? text(nested.type), message: text(nested.message) }
  }
  const code = text(b.error) ?? text(b.code)
  const from = text(b.from)
  return { code, message: text(b.message) ?? (code && from ? `${code} at ${from}` : undefined) }
}

/**
 * What to add when the answer says the URL is not the gateway's API: the gate's 401 `auth_required` on a
 * route a gateway serves publicly, or a 404 `not_found` — a `--gateway` naming a path, or another server.
 */
export function wrongGatewayHint(status: number, code: string | undefined): string {
  return (status === 401 && code === 'auth_required') || (status === 404 && (code === undefined || code === 'not_found'))
    ? " — no such public route there: is --gateway the gateway's base URL (e.g. http://localhost:8000)?"
    : ''
}

/** `<what> answered <status>: <message>`, in the gateway's own words (its code when it says nothing more). */
export function answeredLine(what: string, status: number, body: ErrorBody): string {
  return `${what} answered ${status}: ${body.message ?? body.code ?? `http_${status}`}`
}
