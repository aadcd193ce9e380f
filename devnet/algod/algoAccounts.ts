/**
 * Deterministic devnet Algorand accounts: seed_i = sha256("pay2store-devnet-algorand-<i>").
 *   index 0 — creator/reserve of USDC ASA 31566704 and of the second ASA 10458941
 *   index 1…3 — funded test payers (1,000 ALGO, 1,000,000 USDC and 1,000,000 of ASA 10458941 each, opted in)
 * Public knowledge; devnet only.
 */
import { createHash } from 'node:crypto'
import algosdk from 'algosdk'

export interface AlgoTestAccount {
  index: number
  address: string
  mnemonic: string
  sk: Uint8Array
}

export function algoAccountFromSeed(seed: Uint8Array, index = -1): AlgoTestAccount {
  const mnemonic = algosdk.mnemonicFromSeed(seed)
  const { addr, sk } = algosdk.mnemonicToSecretKey(mnemonic)
  return { index, address: addr.toString(), mnemonic, sk }
}

export function algoTestAccount(index: number): AlgoTestAccount {
  const seed = createHash('sha256').update(`pay2store-devnet-algorand-${index}`).digest()
  return algoAccountFromSeed(new Uint8Array(seed), index)
}

export const ALGO_CREATOR_INDEX = 0
export const ALGO_PAYER_INDEXES = [1, 2, 3] as const
export const ALGO_PAYER_MICROALGOS = 1_000n * 1_000_000n
export const ALGO_PAYER_USDC = 1_000_000n * 1_000_000n
