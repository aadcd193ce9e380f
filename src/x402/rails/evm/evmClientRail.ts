import { isEvmNetwork } from '../../networks.js'
import type { ClientRail } from '../ClientRail.js'

/**
 * The EVM rails' client side: the `--key-env` option (the payer's private key; or `--devnet`), and the payer
 * (./evmClientPayer.ts, loaded when a payment is made: the x402 client and its chain libraries are not loaded
 * for `--help`).
 */
export const evmClientRail: ClientRail = {
  pays: isEvmNetwork,
  options: [{ flags: '--key-env <name>', name: 'keyEnv', description: 'environment variable holding the EVM private key', default: () => 'PAY2STORE_PRIVATE_KEY' }],
  payer: async (source) => (await import('./evmClientPayer.js')).evmClientPayer(source),
}
