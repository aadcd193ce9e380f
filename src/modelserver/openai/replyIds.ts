import { randomBytes } from 'node:crypto'

/** `chatcmpl-…` / `cmpl-…` ids: random, one per request (as Ollama). */
export function completionId(prefix: 'chatcmpl' | 'cmpl'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** A tool call's id, `call_` and 8 random characters (Ollama's form). */
export function toolCallId(): string {
  const bytes = randomBytes(8)
  let id = 'call_'
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length]
  return id
}

/** An id of the Responses and Messages APIs: `resp_…`, `msg_…`, `fc_…`, `rs_…`, `toolu_…` and 24 random hex digits. */
export function prefixedId(prefix: 'resp' | 'msg' | 'fc' | 'rs' | 'toolu'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`
}

/** Unix seconds. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000)
}

/** What Ollama reports as `system_fingerprint`. */
export const SYSTEM_FINGERPRINT = 'fp_ollama'
