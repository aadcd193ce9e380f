/** Where a rejected or missing `from` leads. */
export const FROM_FALLBACK = '/'

const MAX_LENGTH = 2048
// C0 controls, DEL, C1 controls; browsers silently drop tab/CR/LF inside URLs, so `/\t/evil.com` would
// become `//evil.com`.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const BASE = 'http://gate.invalid'

function unsafe(candidate: string): boolean {
  if (CONTROL.test(candidate)) return true
  if (candidate.includes('\\')) return true
  if (!candidate.startsWith('/')) return true
  if (candidate.startsWith('//')) return true
  return false
}

/**
 * Sanitises the post-login return path (seed 000 §4.1 rule 7): only a same-origin absolute path survives.
 * Rejected, falling back to `/`: anything not a string or longer than 2048 characters; absolute URLs
 * (`https://evil.com`, `javascript:…`); scheme-relative `//host`; any backslash (`/\evil.com`); control
 * characters (tab, CR, LF, NUL…); and each of those hidden behind one or more rounds of percent-encoding
 * (`%2F%2Fevil.com`, `/%252F%252Fevil.com`, `%5C`). The login page itself is refused too (no loop).
 * The value returned is re-serialised by the WHATWG URL parser and checked to stay on the same origin.
 */
export function sanitizeFrom(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH) return FROM_FALLBACK
  let candidate = value
  for (let round = 0; round < 5; round++) {
    if (unsafe(candidate)) return FROM_FALLBACK
    let decoded: string
    try {
      decoded = decodeURIComponent(candidate)
    } catch {
      return FROM_FALLBACK
    }
    if (decoded === candidate) break
    candidate = decoded
    if (round === 4) return FROM_FALLBACK // still changing after five rounds: refuse
  }
  let url: URL
  try {
    url = new URL(value, BASE)
  } catch {
    return FROM_FALLBACK
  }
  if (url.origin !== BASE) return FROM_FALLBACK
  const result = `${url.pathname}${url.search}${url.hash}`
  if (unsafe(result)) return FROM_FALLBACK
  if (url.pathname === '/login' || url.pathname.startsWith('/login/')) return FROM_FALLBACK
  return result
}
