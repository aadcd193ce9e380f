import { join } from 'node:path'
import { getAddress, isAddress, type Address } from 'viem'
import { HOW_TO_MAKE_A_SECRET, weakBytesProblem } from '../shared/assessSecret.js'
import { BaseError } from '../shared/errors/BaseError.js'

/**
 * Configuration of the shadow-overlord tier (seed 000 §5.3), read from `SHADOW_*` and two `SERVICE_*` names.
 *
 * - `SHADOW_OVERLORD_ADDRESS`: the overlord's public address. Unset → the tier answers 503
 *   `overlord_not_configured` (challenge issuance included); the rest of the gateway still starts.
 * - `SHADOW_JWT_SECRET`: hex, at least 32 random bytes. Required as soon as the overlord address is set;
 *   a short or patterned secret (a passphrase's hex, one byte, a short repeated pattern, a counting sequence)
 *   refuses start.
 * - `SHADOW_NONCES_PATH`: location of the nonce store when the database is SQLite: a separate SQLite file
 *   (default `<SERVICE_DATA_DIR>/shadow_nonces.sqlite`). With PostgreSQL the nonces live in the main database
 *   (table `shadow_nonces`) so that every gateway process shares them, and this variable is ignored.
 * - `SHADOW_UNLOCK_PROOF_PATH`: flow A of `POST /vault/credentials/reunlock` reads `{address, signature,
 *   message}` from this file (default `<SERVICE_DATA_DIR>/vault_unlock_proof.json`).
 * - Dual-address variables (`SHADOW_OVERLORD_ADDRESS_2`, …) are a planned extension and ignored.
 */
export type ShadowConfig = {
  overlordAddress: Address | undefined
  jwtSecret: Uint8Array | undefined
  noncesPath: string
  unlockProofPath: string
  dataDir: string
  publicOrigin: string
}

export class ShadowConfigError extends BaseError<'shadow_config_invalid'> {
  override name = 'ShadowConfigError'
  readonly variable: string
  constructor(message: string) {
    super('shadow_config_invalid', message)
    this.variable = /^(SHADOW_[A-Z_]+)/.exec(message)?.[1] ?? 'SHADOW_*'
  }
}

export const MIN_JWT_SECRET_BYTES = 32

export function readShadowConfig(env: Record<string, string | undefined> = process.env): ShadowConfig {
  const dataDir = env.SERVICE_DATA_DIR?.trim() || 'data'
  const rawAddress = env.SHADOW_OVERLORD_ADDRESS?.trim()
  let overlordAddress: Address | undefined
  if (rawAddress) {
    if (!isAddress(rawAddress, { strict: false })) throw new ShadowConfigError('SHADOW_OVERLORD_ADDRESS is not a 20-byte hex address.')
    overlordAddress = getAddress(rawAddress)
  }
  const rawSecret = env.SHADOW_JWT_SECRET?.trim()
  let jwtSecret: Uint8Array | undefined
  if (rawSecret) jwtSecret = parseJwtSecret(rawSecret)
  else if (overlordAddress) throw new ShadowConfigError('SHADOW_JWT_SECRET is required when SHADOW_OVERLORD_ADDRESS is set.')
  return {
    overlordAddress,
    jwtSecret,
    noncesPath: env.SHADOW_NONCES_PATH?.trim() || join(dataDir, 'shadow_nonces.sqlite'),
    unlockProofPath: env.SHADOW_UNLOCK_PROOF_PATH?.trim() || join(dataDir, 'vault_unlock_proof.json'),
    dataDir,
    publicOrigin: (env.SERVICE_PUBLIC_ORIGIN?.trim() || `http://localhost:${env.SERVICE_PORT?.trim() || '8000'}`).replace(/\/+$/, ''),
  }
}

/**
 * Decodes the hex secret and refuses one that cannot carry 32 random bytes: shorter than 32 bytes, or one the
 * estimate of `src/shared/assessSecret.ts` finds typed rather than generated (the hex of a passphrase, a byte
 * repeated, a short period, a counting sequence such as `000102…1f`). The error never echoes the secret.
 */
export function parseJwtSecret(hex: string): Uint8Array {
  const clean = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex
  if (!/^[0-9a-fA-F]*$/.test(clean) || clean.length % 2 !== 0) {
    throw new ShadowConfigError('SHADOW_JWT_SECRET must be hex (an even number of 0-9a-f characters).')
  }
  const bytes = Uint8Array.from(Buffer.from(clean, 'hex'))
  if (bytes.length < MIN_JWT_SECRET_BYTES) {
    throw new ShadowConfigError(`SHADOW_JWT_SECRET must decode to at least ${MIN_JWT_SECRET_BYTES} bytes (got ${bytes.length}).`)
  }
  const problem = weakBytesProblem(bytes)
  if (problem) throw new ShadowConfigError(`SHADOW_JWT_SECRET ${problem}: it signs every overlord bearer, so it must be random; ${HOW_TO_MAKE_A_SECRET}.`)
  return bytes
}
