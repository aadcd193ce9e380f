import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** A ULID (48-bit ms time + 80 random bits, Crockford base32, 26 characters). */
export function ulid(now: number = Date.now()): string {
  let time = ''
  let t = now
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  const bytes = randomBytes(10)
  let bits = 0n
  for (const b of bytes) bits = (bits << 8n) | BigInt(b)
  let rand = ''
  for (let i = 0; i < 16; i++) {
    rand = CROCKFORD[Number(bits & 31n)] + rand
    bits >>= 5n
  }
  return time + rand
}

export const newUploadId = () => `upl_${ulid()}`
export const newDepositId = () => `dep_${ulid()}`
export const UPLOAD_ID = /^upl_[0-9A-HJKMNP-TV-Z]{26}$/
