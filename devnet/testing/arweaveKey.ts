/** Arweave RSA-4096 JWKs for the devnet and tests (node:crypto, async; ~1–6 s each). */
import { generateKeyPair, type JsonWebKey } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { dirname } from 'node:path'
import { promisify } from 'node:util'

export interface ArweaveJwk {
  kty: 'RSA'
  n: string
  e: string
  d: string
  p: string
  q: string
  dp: string
  dq: string
  qi: string
}

export async function generateArweaveJwk(): Promise<ArweaveJwk> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 4096, publicExponent: 65537 })
  const jwk = privateKey.export({ format: 'jwk' }) as JsonWebKey
  const { kty, n, e, d, p, q, dp, dq, qi } = jwk
  return { kty: kty as 'RSA', n: n!, e: e!, d: d!, p: p!, q: q!, dp: dp!, dq: dq!, qi: qi! }
}

/** Arweave address of a JWK: base64url(sha256(modulus bytes)). */
export function arweaveAddress(jwk: Pick<ArweaveJwk, 'n'>): string {
  return createHash('sha256').update(Buffer.from(jwk.n, 'base64url')).digest('base64url')
}

/** Loads the JWK at `path`, or generates and writes it (mode 0600) on first use. */
export async function loadOrCreateArweaveJwk(path: string): Promise<{ jwk: ArweaveJwk; created: boolean }> {
  if (existsSync(path)) return { jwk: JSON.parse(readFileSync(path, 'utf8')) as ArweaveJwk, created: false }
  const jwk = await generateArweaveJwk()
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(jwk), { mode: 0o600 })
  renameSync(tmp, path)
  return { jwk, created: true }
}
