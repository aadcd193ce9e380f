/**
 * How strong a configured secret is, estimated without a dictionary: a secret the gateway relies on must be made by
 * a random generator, and the estimate refuses what people type instead — a passphrase (or its hex), a short or
 * repeated pattern, a counting sequence. It is a guard against the common mistakes, not a proof of randomness.
 */

export const HOW_TO_MAKE_A_SECRET = 'generate one with `openssl rand -hex 32`'

/** Expected number of distinct values among `n` uniform draws from `k`. */
function expectedDistinct(n: number, k: number): number {
  return k * (1 - Math.pow(1 - 1 / k, n))
}

/**
 * Why `bytes` (a decoded hex or base64 secret) cannot be random, or undefined. Each test refuses a uniformly
 * random string with negligible probability at the sizes used (16 bytes and up):
 * - every byte printable ASCII — the hex of a text, e.g. a passphrase ((95/256)^16 ≈ 1e-7 for random bytes);
 * - fewer than half the distinct byte values random bytes show (one byte repeated, a small alphabet);
 * - a period of 8 bytes or less (a repeated word);
 * - fewer than half the distinct steps between neighbours (`000102…1f`, `0a141e…`: counting sequences).
 */
export function weakBytesProblem(bytes: Uint8Array): string | undefined {
  const n = bytes.length
  if (n >= 16 && bytes.every((b) => b >= 0x20 && b <= 0x7e)) return 'is the hex of text (a passphrase?), not random bytes'
  if (new Set(bytes).size < expectedDistinct(n, 256) / 2) return 'repeats too few byte values'
  if (hasShortPeriod(bytes, 8)) return 'repeats a short pattern'
  const steps = new Set<number>()
  for (let i = 1; i < n; i++) steps.add((bytes[i]! - bytes[i - 1]! + 256) % 256)
  if (n > 2 && steps.size < expectedDistinct(n - 1, 256) / 2) return 'is a counting sequence or another regular pattern'
  return undefined
}

/**
 * Why a text secret (not hex: a token issued by someone else, a salt) is weak, or undefined: fewer than ~128 bits
 * by its length and alphabet, a phrase (words between spaces or separators), or repeated characters. A
 * `CamelCase` passphrase of enough length passes: without a dictionary it looks like a random token.
 */
export function weakTextProblem(text: string): string | undefined {
  const pool =
    (/[a-z]/.test(text) ? 26 : 0) + (/[A-Z]/.test(text) ? 26 : 0) + (/[0-9]/.test(text) ? 10 : 0) + (/[^A-Za-z0-9]/.test(text) ? 33 : 0)
  const bits = text.length * Math.log2(Math.max(pool, 2))
  if (bits < 128) return `is too short for its alphabet (about ${Math.floor(bits)} bits; at least 128 needed)`
  // A phrase: spaces, or three or more lowercase words between separators (`my-company-jwt-secret`). Random
  // base64url tokens split on `-`/`_` almost never give three all-lowercase pieces.
  const lowercaseWords = text.split(/[^A-Za-z0-9]+/).filter((w) => /^[a-z]{3,}$/.test(w))
  if (/\s/.test(text) || lowercaseWords.length >= 3) return 'reads as words (a passphrase?)'
  if (new Set(text).size < text.length / 3) return 'repeats too few characters'
  if (hasShortPeriod(Buffer.from(text, 'utf8'), 8)) return 'repeats a short pattern'
  return undefined
}

/**
 * A secret given as text: hex (at least 16 bytes) is judged as bytes, anything else as text. Returns the problem,
 * or undefined for a secret that passes.
 */
export function weakSecretProblem(value: string): string | undefined {
  const hex = value.replace(/^0x/i, '')
  if (hex.length >= 32 && hex.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(hex)) return weakBytesProblem(Uint8Array.from(Buffer.from(hex, 'hex')))
  return weakTextProblem(value)
}

function hasShortPeriod(bytes: Uint8Array, maxPeriod: number): boolean {
  for (let period = 1; period <= Math.min(maxPeriod, bytes.length - 1); period++) {
    let periodic = true
    for (let i = period; i < bytes.length; i++) {
      if (bytes[i] !== bytes[i - period]) {
        periodic = false
        break
      }
    }
    if (periodic) return true
  }
  return false
}
