/**
 * The receipt leaf of ReceiptBatches.attestLeaf (seed 000 §4.8) and its mapping from the storage ledger
 * (docs/design.md "Paid storage"): currency codes, the payer address of each rail, and the storage id as
 * bytes32.
 */
import algosdk from 'algosdk'
import { type Address, type Hex, bytesToHex, getAddress, hexToBytes, isAddress, keccak256 } from 'viem'
import { BaseError } from '../shared/errors/BaseError.js'
import { evmNetwork, isEvmNetwork } from '../x402/evmNetworks.js'

/** StandardMerkleTree leaf encoding: (payer, arTxid, sizeBytes, paidAtomics, currency). */
export const LEAF_ENCODING = ['address', 'bytes32', 'uint256', 'uint256', 'uint16'] as const

export const CURRENCY = {
  USDC_BASE: 1,
  USDC_ETHEREUM: 2,
  USDC_ALGORAND: 3,
  ALGO: 4,
} as const

export const ALGORAND_USDC_ASA = '31566704'

export type ReceiptLeaf = {
  payer: Address
  arTxid: Hex
  sizeBytes: bigint
  paidAtomics: bigint
  currency: number
}

/** The tuple as @openzeppelin/merkle-tree takes it (numbers as decimal strings). */
export type LeafTuple = [string, string, string, string, number]

export class ReceiptMappingError extends BaseError<'receipt_mapping_failed'> {
  override name = 'ReceiptMappingError'
  constructor(message: string) {
    super('receipt_mapping_failed', message)
  }
}

const AR_TX_ID = /^[A-Za-z0-9_-]{43}$/

/** The 32 bytes of a 43-character base64url storage id, as 0x-hex. */
export function arTxIdToBytes32(arTxId: string): Hex {
  if (!AR_TX_ID.test(arTxId)) throw new ReceiptMappingError(`not a 43-character base64url storage id: ${arTxId}`)
  const bytes = Buffer.from(arTxId, 'base64url')
  if (bytes.length !== 32 || bytes.toString('base64url') !== arTxId) {
    throw new ReceiptMappingError(`storage id does not decode to 32 bytes: ${arTxId}`)
  }
  return bytesToHex(bytes)
}

export function bytes32ToArTxId(hex: Hex): string {
  const bytes = hexToBytes(hex)
  if (bytes.length !== 32) throw new ReceiptMappingError(`not 32 bytes: ${hex}`)
  return Buffer.from(bytes).toString('base64url')
}

/** Currency code of a deposit: network plus the asset recorded by the rail. */
export function currencyCode(network: string, asset: string): number {
  const evm = evmNetwork(network)
  if (evm) return evm.currency
  if (network.startsWith('algorand:')) {
    if (asset === ALGORAND_USDC_ASA) return CURRENCY.USDC_ALGORAND
    if (asset === 'ALGO' || asset === '0') return CURRENCY.ALGO
    throw new ReceiptMappingError(`unknown Algorand asset ${asset}`)
  }
  throw new ReceiptMappingError(`no currency code for network ${network}`)
}

/**
 * The payer as an EVM address: the address itself on eip155 rails; for Algorand, the last 20 bytes of
 * keccak256 of the account's 32-byte public key.
 */
export function payerAddress(network: string, payer: string): Address {
  if (isEvmNetwork(network)) {
    if (!isAddress(payer, { strict: false })) throw new ReceiptMappingError(`not an EVM address: ${payer}`)
    return getAddress(payer)
  }
  if (network.startsWith('algorand:')) {
    let publicKey: Uint8Array
    try {
      // base32 is case-insensitive; ledgers written before the fix hold Algorand payers lower-cased
      publicKey = algosdk.decodeAddress(payer.toUpperCase()).publicKey
    } catch {
      throw new ReceiptMappingError(`not an Algorand address: ${payer}`)
    }
    return getAddress(`0x${keccak256(publicKey).slice(-40)}`)
  }
  throw new ReceiptMappingError(`no payer mapping for network ${network}`)
}

export function toLeafTuple(leaf: ReceiptLeaf): LeafTuple {
  return [leaf.payer, leaf.arTxid, leaf.sizeBytes.toString(), leaf.paidAtomics.toString(), leaf.currency]
}
