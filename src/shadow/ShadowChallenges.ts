import { createHash } from 'node:crypto'
import type { Address } from 'viem'
import { buildChallengeMessage } from './buildChallengeMessage.js'
import type { NonceRecord, NonceStore } from './NonceStore.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { type BoundParams, normaliseBoundParams, type ShadowScope, SHADOW_SCOPES } from './scopes.js'
import { verifyOverlordSignature } from '../overlord/verifyOverlordSignature.js'

export type IssuedChallenge = { nonce: string; message: string; expires_at: number }

export type ConsumeInput = {
  /** The endpoint's scope. */
  scope: ShadowScope
  nonce: unknown
  signature: unknown
  /** The request's values of the bound parameters (company, agent_id, confirm). */
  params: Record<string, string | undefined>
  /** `vault.sign` only: the payload whose SHA-256 must equal the bound `message_sha256` (400 otherwise). */
  message?: string
}

export const NONCE_PATTERN = /^0x[0-9a-f]{64}$/

export function sha256Hex(text: string): string {
  return `0x${createHash('sha256').update(text, 'utf8').digest('hex')}`
}

/**
 * Issues and consumes signed single-use challenges (seed 000 §2.2, §3.1, §4.4). `overlordAddress()` is read
 * on every call so an unset address gives 503 without restarting the process.
 */
export class ShadowChallenges {
  constructor(
    private readonly store: NonceStore,
    private readonly overlordAddress: () => Address | undefined,
    private readonly origin: string,
  ) {}

  requireOverlord(): Address {
    const address = this.overlordAddress()
    if (!address) throw new ShadowError('overlord_not_configured', 'The shadow-overlord address is not configured on this server.')
    return address
  }

  async issue(scope: unknown, params: unknown): Promise<IssuedChallenge & { scope: ShadowScope; params: BoundParams }> {
    this.requireOverlord()
    const normalised = normaliseBoundParams(scope, params)
    const record = await this.store.issue(normalised.scope, normalised.params, (nonce, issuedAt, expiresAt) =>
      buildChallengeMessage({ scope: normalised.scope, nonce, params: normalised.params, origin: this.origin, issuedAt, expiresAt }),
    )
    return { nonce: record.nonce, message: record.message, expires_at: record.expiresAt, scope: record.scope, params: record.params }
  }

  /**
   * The consume rules of seed 4.4, in order: nonce exists (404) → unexpired (410) → unconsumed (409) → scope
   * equals the endpoint's (403) → bound params equal the request's (403; the `vault.sign` message hash 400)
   * → signature recovers to the overlord in constant time (403) → atomic mark. Only after this returns may
   * the caller touch the vault.
   */
  async consume(input: ConsumeInput): Promise<NonceRecord> {
    const overlord = this.requireOverlord()
    const nonce = typeof input.nonce === 'string' ? input.nonce.toLowerCase() : undefined
    if (!nonce || !NONCE_PATTERN.test(nonce)) throw new ShadowError('nonce_not_found', 'Unknown nonce; request a new challenge.')
    const record = await this.store.get(nonce)
    const now = this.store.now()
    if (!record) throw new ShadowError('nonce_not_found', 'Unknown nonce; request a new challenge.')
    if (now >= record.expiresAt) throw new ShadowError('nonce_expired', 'This challenge has expired; request a new one.')
    if (record.consumedAt !== null) throw new ShadowError('nonce_consumed', 'This challenge was already used; request a new one.')
    if (record.scope !== input.scope) throw new ShadowError('scope_mismatch', `The challenge was issued for scope ${record.scope}, not ${input.scope}.`)
    for (const name of SHADOW_SCOPES[input.scope] as readonly string[]) {
      if (name === 'message_sha256') {
        if (typeof input.message !== 'string' || sha256Hex(input.message) !== record.params.message_sha256) {
          throw new ShadowError('message_hash_mismatch', 'SHA-256 of message differs from the bound message_sha256.')
        }
        continue
      }
      if (input.params[name] !== record.params[name]) {
        // The bound confirm always equals the literal (checked at issuance), so a differing one is the
        // caller typing the wrong literal: 400, like at issuance.
        if (name === 'confirm') throw new ShadowError('confirm_mismatch', 'confirm differs from the required confirm literal.')
        throw new ShadowError('params_mismatch', `The request's ${name} differs from the value bound into the challenge.`)
      }
    }
    if (!(await verifyOverlordSignature(record.message, input.signature, overlord))) {
      throw new ShadowError('bad_signature', 'The signature does not recover to the overlord address.')
    }
    if (!(await this.store.markConsumed(nonce, now))) {
      const again = await this.store.get(nonce)
      if (!again) throw new ShadowError('nonce_not_found', 'Unknown nonce; request a new challenge.')
      if (again.consumedAt !== null) throw new ShadowError('nonce_consumed', 'This challenge was already used; request a new one.')
      throw new ShadowError('nonce_expired', 'This challenge has expired; request a new one.')
    }
    return { ...record, consumedAt: now }
  }
}
