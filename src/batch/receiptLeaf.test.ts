import { randomBytes } from 'node:crypto'
import algosdk from 'algosdk'
import { getAddress, keccak256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { ReceiptMappingError, arTxIdToBytes32, bytes32ToArTxId, currencyCode, payerAddress } from './receiptLeaf.js'

describe('receipt leaf mapping', () => {
  it('turns a 43-character base64url storage id into its 32 bytes and back', () => {
    for (let i = 0; i < 50; i++) {
      const bytes = randomBytes(32)
      const id = bytes.toString('base64url')
      expect(id).toHaveLength(43)
      expect(arTxIdToBytes32(id)).toBe(`0x${bytes.toString('hex')}`)
      expect(bytes32ToArTxId(arTxIdToBytes32(id))).toBe(id)
    }
  })

  it('rejects ids that are not 32 bytes of base64url', () => {
    expect(() => arTxIdToBytes32('short')).toThrow(ReceiptMappingError)
    expect(() => arTxIdToBytes32(`${'A'.repeat(42)}+`)).toThrow(ReceiptMappingError)
    // 43 chars whose last character carries non-zero padding bits: not a canonical encoding
    expect(() => arTxIdToBytes32(`${'A'.repeat(42)}B`)).toThrow(ReceiptMappingError)
  })

  it('maps networks and assets to the currency codes of docs/design.md', () => {
    expect(currencyCode('eip155:8453', '0xabc')).toBe(1)
    expect(currencyCode('eip155:1', '0xabc')).toBe(2)
    expect(currencyCode('algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=', '31566704')).toBe(3)
    expect(currencyCode('algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=', 'ALGO')).toBe(4)
    expect(() => currencyCode('algorand:x', '12345')).toThrow(ReceiptMappingError)
    expect(() => currencyCode('eip155:10', '0xabc')).toThrow(ReceiptMappingError)
  })

  it('uses the EVM payer as is (checksummed) and maps an Algorand payer to keccak256(public key)[12:]', () => {
    const evm = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
    expect(payerAddress('eip155:8453', evm)).toBe(getAddress(evm))
    expect(() => payerAddress('eip155:1', 'not-an-address')).toThrow(ReceiptMappingError)
    const account = algosdk.generateAccount()
    const publicKey = account.sk.slice(32) // ed25519 secret key = seed ‖ public key
    const expected = getAddress(`0x${keccak256(publicKey).slice(2 + 24)}`)
    expect(payerAddress('algorand:genesis', account.addr.toString())).toBe(expected)
    // a ledger row written lower-cased (before Ledger kept Algorand payers as written) still maps
    expect(payerAddress('algorand:genesis', account.addr.toString().toLowerCase())).toBe(expected)
    expect(() => payerAddress('algorand:genesis', 'NOTANALGORANDADDRESS')).toThrow(ReceiptMappingError)
  })
})
