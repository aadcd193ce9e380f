import type { CatalogueEvent } from './EventSink.js'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
/**
 * Payload keys that identify a person without an address: a raw IP. (The gate's `ip_hash` is salted with a secret
 * that never leaves the server, so it names no one a reader can find; those events stay readable.)
 */
const PERSONAL_KEYS = new Set(['ip'])
/** Shadow-tier and cabinet events concern the operator's vault, whoever they name: overlord eyes only. */
const OPERATOR_KINDS = /^admin\./

/**
 * Whether a wallet may read a catalogue event: the events about itself — its address is the actor or
 * appears anywhere in the payload — and the kinds that name no one (no address, no raw IP; e.g. a storage batch
 * committed, a gate redirect with its salted IP hash). Another wallet's login, keys, payments, feedback and every `admin.*` event are not its to read.
 * Addresses compare case-insensitively (events carry checksummed and lower-case forms).
 */
export function eventVisibleTo(event: CatalogueEvent, wallet: string): boolean {
  if (OPERATOR_KINDS.test(event.kind)) return false
  const names = new Set<string>()
  let personal = false
  const visit = (value: unknown, key: string | undefined, depth: number): void => {
    if (key !== undefined && PERSONAL_KEYS.has(key) && value !== null && value !== undefined) personal = true
    if (typeof value === 'string') {
      if (ADDRESS.test(value)) names.add(value.toLowerCase())
    } else if (depth < 4 && value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, Array.isArray(value) ? key : k, depth + 1)
    }
  }
  visit(event.actor, undefined, 0)
  visit(event.payload, undefined, 0)
  if (names.has(wallet.toLowerCase())) return true
  return names.size === 0 && !personal
}
