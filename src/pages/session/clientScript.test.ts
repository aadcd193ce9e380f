/**
 * The session pages' shared browser helpers, run as the page runs them (the script's own text): sizes and counts
 * as people write them, and addresses in the one EIP-55 form viem (and the wallet, and the navigation) writes.
 */
import { getAddress, keccak256, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { clientScript } from './clientScript.js'

type Helpers = {
  bytes: (n: number) => string
  count: (n: number, one: string, many?: string) => string
  keccak256Hex: (input: Uint8Array) => string
  checksum: (address: string) => string
  checksummed: (text: string) => string
}
const helpers = new Function(`${clientScript}; return { bytes, count, keccak256Hex, checksum, checksummed };`)() as Helpers

describe('session page helpers', () => {
  it('sizes in binary units with three significant figures', () => {
    expect(helpers.bytes(0)).toBe('0 B')
    expect(helpers.bytes(1023)).toBe('1023 B')
    expect(helpers.bytes(1024)).toBe('1 KiB')
    expect(helpers.bytes(1536)).toBe('1.5 KiB')
    expect(helpers.bytes(300_000)).toBe('293 KiB')
    expect(helpers.bytes(12_345_678)).toBe('11.8 MiB')
    expect(helpers.bytes(5 * 1024 ** 3)).toBe('5 GiB')
  })

  it('counts with the noun in the singular for one', () => {
    expect(helpers.count(1, 'upload')).toBe('1 upload')
    expect(helpers.count(2, 'upload')).toBe('2 uploads')
    expect(helpers.count(0, 'agent')).toBe('0 agents')
    expect(helpers.count(3, 'entry', 'entries')).toBe('3 entries')
  })

  it('keccak-256 equals viem’s for lengths around the 136-byte block', () => {
    for (const length of [0, 1, 40, 135, 136, 137, 271, 272, 300]) {
      const input = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff)
      expect(`0x${helpers.keccak256Hex(input)}`, `length ${length}`).toBe(keccak256(toHex(input)))
    }
  })

  it('writes every address as viem’s getAddress does, also inside text', () => {
    for (let i = 0; i < 20; i++) {
      const address = privateKeyToAddress(generatePrivateKey())
      expect(helpers.checksum(address.toLowerCase())).toBe(getAddress(address))
      expect(helpers.checksum(address.toUpperCase().replace('0X', '0x'))).toBe(getAddress(address))
    }
    const a = privateKeyToAddress(generatePrivateKey())
    expect(helpers.checksummed(`Feedback from ${a.toLowerCase()} on /dojo`)).toBe(`Feedback from ${getAddress(a)} on /dojo`)
    // Not an address: a 64-hex hash is left as it is.
    const hash = keccak256(toHex('x'))
    expect(helpers.checksummed(hash)).toBe(hash)
  })
})
