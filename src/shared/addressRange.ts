import { ipKeyGenerator } from 'express-rate-limit'
import ipaddr from 'ipaddr.js'

/** How wide a client network is counted: IPv4 by its /`ipv4Prefix`, IPv6 by its /`ipv6Prefix`. */
export type AddressRangeWidth = { ipv4Prefix: number; ipv6Prefix: number }

/**
 * The network a client address belongs to, as `address/prefix` (`203.0.113.0/24`, `2001:db8:1::/48`): one
 * person can make any number of wallets for free but not of networks, so per-network limits bound what new
 * wallets buy. An IPv4-mapped IPv6 address counts as its IPv4 address. `undefined` for
 * what is not an address (a socket already gone).
 */
export function addressRange(ip: string | undefined, width: AddressRangeWidth): string | undefined {
  if (!ip) return undefined
  // Remembered per width and address: every cost call asks, in front of its model request, and parsing costs
  // ~25 µs for an IPv4 address and ~70 µs for an IPv4-mapped IPv6 one (a dual-stack listener's) once the caches
  // are cold between calls, against a few µs for the lookup. Bounded: past this many addresses it starts over.
  let known = ranges.get(width)
  if (!known) ranges.set(width, (known = new Map()))
  const range = known.get(ip)
  if (range !== undefined || known.has(ip)) return range
  if (known.size >= 10_000) known.clear()
  const computed = computeRange(ip, width)
  known.set(ip, computed)
  return computed
}

const ranges = new WeakMap<AddressRangeWidth, Map<string, string | undefined>>()

function computeRange(ip: string, width: AddressRangeWidth): string | undefined {
  if (!ipaddr.isValid(ip)) return undefined
  const address = ipaddr.process(ip)
  if (address.kind() === 'ipv6') return ipKeyGenerator(address.toString(), width.ipv6Prefix) // `2001:db8:1::/48`, as the rate limit counts
  return `${ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${width.ipv4Prefix}`).toString()}/${width.ipv4Prefix}`
}

/** Whether `ip` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback). */
export function isLoopbackAddress(ip: string | undefined): boolean {
  if (!ip || !ipaddr.isValid(ip)) return false
  return ipaddr.process(ip).range() === 'loopback'
}
