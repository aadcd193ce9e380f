/**
 * The receipt leaf of ReceiptBatches.attestLeaf (seed 000 §4.8) and its mapping from the storage ledger
 * (docs/design.md "Paid storage"): currency codes, the payer address of each rail, and the storage id as
 * bytes32.
 */
import { type Address, type Hex, bytesToHex, hexToBytes } from 'viem'
import { BaseError } from '../shared/errors/BaseError.js'
import { ALGORAND_NETWORK, EVM_NETWORKS, knownNetwork, receiptPayerOf } from '../x402/networks.js'

/** StandardMerkleTree leaf encoding: (payer, arTxid, sizeBytes, paidAtomics, currency). */
export const LEAF_ENCODING = ['address', 'bytes32', 'uint256', 'uint256', 'uint16'] as const

/** The codes of the network table (src/x402/networks.ts), by name. */
export const CURRENCY = {
  USDC_BASE: EVM_NETWORKS.find((n) => n.name === 'base')!.currency,
  USDC_ETHEREUM: EVM_NETWORKS.find((n) => n.name === 'ethereum')!.currency,
  USDC_ALGORAND: ALGORAND_NETWORK.currency.usdc,
  ALGO: ALGORAND_NETWORK.currency.algo,
} as const

export const ALGORAND_USDC_ASA = ALGORAND_NETWORK.usdcAssetId.toString()

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

/** Currency code of a deposit: network plus the asset recorded by the rail (the network table says). */
export function currencyCode(network: string, asset: string): number {
  const known = knownNetwork(network)
  if (!known) throw new ReceiptMappingError(`no currency code for network ${network}`)
  const code = known.currency(asset)
  if (code === undefined) throw new ReceiptMappingError(`unknown ${known.name} asset ${asset}`)
  return code
}

/**
 * The payer as an EVM address: the address itself on eip155 rails; for Algorand, the last 20 bytes of
 * keccak256 of the account's 32-byte public key (the network table maps it).
 */
export function payerAddress(network: string, payer: string): Address {
  const receiptPayer = receiptPayerOf(network)
  if (!receiptPayer) throw new ReceiptMappingError(`no payer mapping for network ${network}`)
  try {
    return receiptPayer(payer)
  } catch (error) {
    throw new ReceiptMappingError(error instanceof Error ? error.message : String(error))
  }
}

export function toLeafTuple(leaf: ReceiptLeaf): LeafTuple {
  return [leaf.payer, leaf.arTxid, leaf.sizeBytes.toString(), leaf.paidAtomics.toString(), leaf.currency]
}
