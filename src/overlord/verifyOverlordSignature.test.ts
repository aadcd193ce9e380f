import { describe, expect, it } from 'vitest'
import { addressesEqual, parseStrictSignature, verifyOverlordSignature } from './verifyOverlordSignature.js'
import { testOverlord } from '../../tests/support/shadowFixtures.js'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** The malleable twin of a low-s signature: s' = n - s, v flipped. Recovers to the same address. */
function highS(signature: string): `0x${string}` {
  const r = signature.slice(2, 66)
  const s = BigInt(`0x${signature.slice(66, 130)}`)
  const v = Number.parseInt(signature.slice(130), 16)
  return `0x${r}${(N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`
}

describe('verifyOverlordSignature', () => {
  const { account } = testOverlord()
  const other = testOverlord().account
  const message = 'svc-shadow-overlord/v1 scope=auth\nnonce: 0x00'

  it('accepts an EIP-191 signature by the overlord (v = 27/28 and 0/1)', async () => {
    const sig = await account.signMessage({ message })
    expect(await verifyOverlordSignature(message, sig, account.address)).toBe(true)
    const v01 = `${sig.slice(0, 130)}${(Number.parseInt(sig.slice(130), 16) - 27).toString(16).padStart(2, '0')}`
    expect(await verifyOverlordSignature(message, v01, account.address)).toBe(true)
    expect(await verifyOverlordSignature(message, sig.toUpperCase().replace('0X', '0x'), account.address)).toBe(true)
  })

  it('rejects another signer, another message, and the malleable high-s twin', async () => {
    const sig = await account.signMessage({ message })
    expect(await verifyOverlordSignature(message, await other.signMessage({ message }), account.address)).toBe(false)
    expect(await verifyOverlordSignature(`${message} `, sig, account.address)).toBe(false)
    expect(parseStrictSignature(highS(sig))).toBeUndefined()
    expect(await verifyOverlordSignature(message, highS(sig), account.address)).toBe(false)
  })

  it.each([undefined, null, 42, '', '0x', '0x1234', `0x${'00'.repeat(65)}`, `0x${'ff'.repeat(65)}`, `0x${'11'.repeat(64)}1d`, `0x${'11'.repeat(66)}`])(
    'rejects malformed signature %s without throwing',
    async (sig) => {
      expect(await verifyOverlordSignature(message, sig, account.address)).toBe(false)
    },
  )

  it('compares addresses on normalised bytes', () => {
    expect(addressesEqual(account.address, account.address.toLowerCase())).toBe(true)
    expect(addressesEqual(account.address, other.address)).toBe(false)
    expect(addressesEqual(account.address, 'nope')).toBe(false)
  })
})
