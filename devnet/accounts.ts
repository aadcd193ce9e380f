/**
 * Devnet EVM accounts: Anvil's default mnemonic ("test test … junk", path m/44'/60'/0'/0/i).
 *   index 0 — token deployer and owner (the only minter)
 *   index 1 — facilitator settlement signer (pays gas for transferWithAuthorization)
 *   index 2…5 — funded test payers (USDC minted on both chains; ETH from Anvil's genesis)
 * These keys are public knowledge; they exist only on the devnet.
 */
import { bytesToHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'

export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

export interface EvmTestAccount {
  index: number
  role: 'deployer' | 'facilitator' | 'payer'
  address: `0x${string}`
  privateKey: `0x${string}`
}

const cache = new Map<number, EvmTestAccount>()

export function anvilAccount(index: number): EvmTestAccount {
  let a = cache.get(index)
  if (!a) {
    const acct = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index })
    const key = acct.getHdKey().privateKey
    if (!key) throw new Error('no private key')
    a = {
      index,
      role: index === 0 ? 'deployer' : index === 1 ? 'facilitator' : 'payer',
      address: acct.address,
      privateKey: bytesToHex(key),
    }
    cache.set(index, a)
  }
  return a
}

export const DEPLOYER_INDEX = 0
export const FACILITATOR_INDEX = 1
export const PAYER_INDEXES = [2, 3, 4, 5] as const

export function payerAccounts(): EvmTestAccount[] {
  return PAYER_INDEXES.map((i) => anvilAccount(i))
}
