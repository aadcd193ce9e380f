import { describe, expect, it } from 'vitest'
import { AddressPermits, clientAddressKey } from './AddressPermits.js'

describe('AddressPermits', () => {
  it('gives at most max permits per address, refuses the next with the caller’s error, and counts addresses apart', () => {
    const permits = new AddressPermits(2, () => new Error('full'))
    const a1 = permits.acquire('a')
    permits.acquire('a')
    expect(() => permits.acquire('a')).toThrow('full')
    expect(() => permits.acquire('b')).not.toThrow()
    a1()
    a1() // a second release gives nothing back twice
    expect(permits.inUse('a')).toBe(1)
    expect(() => permits.acquire('a')).not.toThrow()
    expect(() => permits.acquire('a')).toThrow('full')
  })

  it('is keyed safely by any user-supplied address (a Map: no prototype names)', () => {
    const permits = new AddressPermits(1, () => new Error('full'))
    const release = permits.acquire('__proto__')
    expect(() => permits.acquire('constructor')).not.toThrow()
    release()
    expect(permits.inUse('__proto__')).toBe(0)
  })
})

describe('clientAddressKey', () => {
  it('counts an IPv6 client by its /56 and an IPv4 client by its address', () => {
    expect(clientAddressKey('2001:db8:1:1200::1')).toBe(clientAddressKey('2001:db8:1:12ff:ffff::9'))
    expect(clientAddressKey('2001:db8:1:1200::1')).not.toBe(clientAddressKey('2001:db8:1:1300::1'))
    expect(clientAddressKey('192.0.2.1')).toBe('192.0.2.1')
    expect(clientAddressKey(undefined)).toBe('')
  })
})
