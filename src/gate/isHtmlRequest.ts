/**
 * How the gate recognises a browser page request (seed 000 §4.1 rule 4 leaves it open). HTML when either:
 * - `Sec-Fetch-Mode: navigate` (a top-level or frame navigation: the browser will render whatever it gets), or
 * - the `Accept` header names `text/html` (or `application/xhtml+xml`) before any JSON type (`application/json`,
 *   `*+json`). Browsers send `text/html,…,*\/*` on navigations; `fetch()` and API clients send `*\/*` or JSON.
 * Everything else — no `Accept`, `*\/*` alone, JSON first — is an API request and gets the JSON 401.
 */
export function isHtmlRequest(headers: Record<string, string | string[] | undefined>): boolean {
  const mode = first(headers['sec-fetch-mode'])
  if (mode?.toLowerCase() === 'navigate') return true
  const accept = first(headers.accept)
  if (!accept) return false
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase()
    if (type === 'text/html' || type === 'application/xhtml+xml') return true
    if (type === 'application/json' || type.endsWith('+json')) return false
  }
  return false
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
