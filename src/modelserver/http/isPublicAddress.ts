import { BlockList, isIP } from 'node:net'

/**
 * IANA special-purpose ranges (RFC 6890 and its updates) that a server-side fetch must never reach on a remote
 * party's say-so: private, loopback, link-local (cloud metadata at 169.254.169.254), shared/CGNAT, unspecified,
 * multicast, documentation and reserved blocks, and the IPv6 forms that embed an IPv4 address (mapped, NAT64,
 * 6to4) — those are unwrapped and checked as IPv4. Node's own BlockList does the matching.
 */
const v4 = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  v4.addSubnet(net, prefix, 'ipv4')
}

const v6 = new BlockList()
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  v6.addSubnet(net, prefix, 'ipv6')
}

/** The IPv4 address an IPv6 address carries (`::ffff:a.b.c.d`, `64:ff9b::/96`, `2002::/16`, `::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address)
  if (!groups) return undefined
  const tail = () => `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0)
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return tail() // mapped or compatible
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return tail() // NAT64
  if (groups[0] === 0x2002) return `${groups[1]! >> 8}.${groups[1]! & 255}.${groups[2]! >> 8}.${groups[2]! & 255}` // 6to4
  return undefined
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '')
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const left = head ? head.split(':') : []
  const right = tail !== undefined && tail !== '' ? tail.split(':') : []
  const fill = tail === undefined ? 0 : 8 - left.length - right.length
  const groups = [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16))
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

/** True when `address` (an IP literal) is an ordinary public unicast address; false for anything else. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''))
  if (family === 4) return !v4.check(address, 'ipv4')
  if (family !== 6) return false
  const inner = embeddedIpv4(address)
  if (inner !== undefined) return isPublicAddress(inner)
  return !v6.check(address.replace(/%.*$/, ''), 'ipv6')
}
