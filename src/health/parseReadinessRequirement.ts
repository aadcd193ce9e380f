import { defineError } from '../shared/errors/defineError.js'
import type { ReadinessRequirement } from './Readiness.js'

/**
 * The `require` of `GET /health/ready`: unset or `all` (every configured capability), `none` (the replica's own
 * phase only), or capability names separated by commas. Names it does not know come back as `unknown`: a typo in a
 * balancer's check must be an error, not a check that requires nothing.
 */
export function parseReadinessRequirement(raw: string | undefined, known: readonly string[]): ReadinessRequirement | { unknown: string[] } {
  const value = raw?.trim() ?? ''
  if (value === '' || value === 'all') return 'all'
  if (value === 'none') return 'none'
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '')
  const unknown = names.filter((n) => !known.includes(n))
  return unknown.length > 0 ? { unknown } : names
}

/** 400 `invalid_request`: `require` names a capability this gateway does not have. */
export const UnknownCapabilityError = defineError('UnknownCapabilityError', 'invalid_request', (unknown: readonly string[], known: readonly string[]) =>
  `require names no capability of this gateway: ${unknown.join(', ')} (known: ${known.join(', ')}, or all, none)`,
)
export type UnknownCapabilityError = InstanceType<typeof UnknownCapabilityError>
