import type { BoundParams, ShadowScope } from './scopes.js'
import { SHADOW_SCOPES } from './scopes.js'

/** The fixed first-line prefix of every shadow challenge (seed 000 §2.2 `<PREFIX>`). */
export const SHADOW_CHALLENGE_PREFIX = 'svc-shadow-overlord/v1'

export type ChallengeMessageInput = {
  scope: ShadowScope
  nonce: string
  params: BoundParams
  origin: string
  issuedAt: number
  expiresAt: number
}

/**
 * The exact text the overlord signs (EIP-191 personal message), built by the server only:
 * `<PREFIX> scope=<scope>`, `nonce: <nonce>`, one `<name>: <value>` per bound parameter in the scope's
 * order, `origin: …`, `issued_at: …`, `expires_at: …`, joined by `\n`.
 */
export function buildChallengeMessage(input: ChallengeMessageInput): string {
  const lines = [`${SHADOW_CHALLENGE_PREFIX} scope=${input.scope}`, `nonce: ${input.nonce}`]
  for (const name of SHADOW_SCOPES[input.scope] as readonly string[]) lines.push(`${name}: ${input.params[name]}`)
  lines.push(`origin: ${input.origin}`, `issued_at: ${input.issuedAt}`, `expires_at: ${input.expiresAt}`)
  return lines.join('\n')
}
