import { describe, expect, it } from 'vitest'
import { addressRange, isLoopbackAddress } from './addressRange.js'

const width = { ipv4Prefix: 24, ipv6Prefix: 48 }

describe('addressRange', () => {
  it('counts IPv4 by its /24 and IPv6 by its /48', () => {
    expect(addressRange('203.0.113.7', width)).toBe('203.0.113.0/24')
    expect(addressRange('203.0.113.250', width)).toBe('203.0.113.0/24')
    expect(addressRange('203.0.114.1', width)).not.toBe(addressRange('203.0.113.1', width))
    expect(addressRange('2001:db8:1:2:3::1', width)).toBe(addressRange('2001:db8:1:ffff::9', width))
    expect(addressRange('2001:db8:2::1', width)).not.toBe(addressRange('2001:db8:1::1', width))
  })

  it('reads an IPv4-mapped IPv6 address as IPv4', () => {
    expect(addressRange('::ffff:203.0.113.7', width)).toBe('203.0.113.0/24')
  })

  it('has no range for what is not an address', () => {
    expect(addressRange(undefined, width)).toBeUndefined()
    expect(addressRange('not-an-ip', width)).toBeUndefined()
    expect(addressRange('not-an-ip', width)).toBeUndefined() // remembered as none
  })

  it('remembers an answer per width: the same address under another width is its own range', () => {
    const wide = { ipv4Prefix: 16, ipv6Prefix: 32 }
    expect(addressRange('198.51.100.7', width)).toBe('198.51.100.0/24')
    expect(addressRange('198.51.100.7', wide)).toBe('198.51.0.0/16')
    expect(addressRange('198.51.100.7', width)).toBe('198.51.100.0/24')
    expect(addressRange('2001:db8:1:2::1', wide)).toBe('2001:db8::/32')
    expect(addressRange('2001:db8:1:2::1', width)).toBe('2001:db8:1::/48')
  })
})

describe('isLoopbackAddress', () => {
  it('knows loopback in every spelling and nothing else', () => {
    for (const ip of ['127.0.0.1', '127.8.9.1', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(ip)).toBe(true)
    for (const ip of ['10.0.0.1', '192.168.1.1', '::', '2001:db8::1', '', 'localhost']) expect(isLoopbackAddress(ip)).toBe(false)
  })
})
