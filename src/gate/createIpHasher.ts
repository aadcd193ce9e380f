import { createHmac, randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * `ip_hash` of gate events: `sha256:` + hex HMAC-SHA256(salt, ip). Salted (keyed) on purpose: the IPv4 space
 * is only 2^32 addresses, so a plain SHA-256 is reversed by brute force in minutes and the "hash" would be
 * personal data in clear. The salt is stable per deployment (so one client's redirects can still be counted
 * and correlated over time) and never leaves the server: `SERVICE_GATE__IP_HASH_SALT`, or else a random
 * 32-byte value generated on first start and kept in `<data dir>/ip-hash-salt`.
 */
export function createIpHasher(salt: string): (ip: string) => string {
  return (ip: string) => `sha256:${createHmac('sha256', salt).update(ip).digest('hex')}`
}

export function loadOrCreateSalt(configured: string | undefined, saltPath: string): string {
  if (configured) return configured
  try {
    const existing = readFileSync(saltPath, 'utf8').trim()
    if (existing) return existing
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const salt = randomBytes(32).toString('hex')
  mkdirSync(dirname(saltPath), { recursive: true })
  try {
    writeFileSync(saltPath, `${salt}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(saltPath, 'utf8').trim()
    throw error
  }
  return salt
}
