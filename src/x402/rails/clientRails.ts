import { algorandClientRail } from './algorand/algorandClientRail.js'
import type { ClientOption, ClientRail } from './ClientRail.js'
import { evmClientRail } from './evm/evmClientRail.js'

/**
 * The client sides of the rails, one per family of networks of the network table: a paying client picks the
 * one that pays a requirement's network. A new rail's client side is one more entry.
 */
export const CLIENT_RAILS: readonly ClientRail[] = [evmClientRail, algorandClientRail]

/** The client rail that pays requirements on `network`, or undefined when none does. */
export function clientRailFor(network: string): ClientRail | undefined {
  return CLIENT_RAILS.find((rail) => rail.pays(network))
}

/** Every client rail's options, once each (the commands that pay take them all: the rail is chosen per call). */
export function clientRailOptions(): ClientOption[] {
  const byFlags = new Map<string, ClientOption>()
  for (const rail of CLIENT_RAILS) for (const option of rail.options) if (!byFlags.has(option.flags)) byFlags.set(option.flags, option)
  return [...byFlags.values()]
}

export { type ClientPayer, type ClientPaymentRequired, ClientPaymentError, type ClientRail } from './ClientRail.js'
