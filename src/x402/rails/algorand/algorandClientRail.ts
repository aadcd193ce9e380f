import { isAlgorandNetwork } from '../../networks.js'
import type { ClientRail } from '../ClientRail.js'

/**
 * The Algorand rail's client side: its key and node options (or `--devnet`), and the payer
 * (./algorandClientPayer.ts, loaded when a payment is made).
 */
export const algorandClientRail: ClientRail = {
  pays: isAlgorandNetwork,
  options: [
    { flags: '--algorand-key-env <name>', name: 'algorandKeyEnv', description: 'environment variable holding the Algorand payer mnemonic (--rail algorand)', default: () => 'PAY2STORE_ALGORAND_MNEMONIC' },
    {
      flags: '--algod <url>',
      name: 'algod',
      description: 'Algorand node the payment is sent to (--rail algorand; $PAY2STORE_ALGOD_URL, else the devnet file, else http://127.0.0.1:8405)',
      default: (env) => env.PAY2STORE_ALGOD_URL?.trim() || undefined,
    },
    { flags: '--algod-token-env <name>', name: 'algodTokenEnv', description: 'environment variable holding the Algorand node token (--rail algorand)', default: () => 'PAY2STORE_ALGOD_TOKEN' },
  ],
  payer: async (source) => (await import('./algorandClientPayer.js')).algorandClientPayer(source),
}
