import { randomBytes } from 'node:crypto'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** A ULID (26 Crockford base-32 characters: 48-bit millisecond time + 80 random bits). */
export function ulid(nowMs: number = Date.now()): string {
  let time = ''
  let t = nowMs
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time
    t = Math.floor(t / 32)
  }
  let rand = ''
  for (const byte of randomBytes(16)) rand += CROCKFORD[byte % 32]
  return time + rand
}
