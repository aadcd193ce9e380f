import { createPublicClient, http } from 'viem'
import type { SignatureVerifier } from './LoginService.js'

/**
 * Login signatures verified through the login chain's JSON-RPC (`SERVICE_LOGIN__RPC_URL`), so smart-contract
 * wallets sign in as many x402 payers on Base do: a deployed contract answers EIP-1271 `isValidSignature`, a
 * not-yet-deployed one sends an EIP-6492 wrapper (factory + calldata) that viem checks with its deployless
 * universal validator in one `eth_call`. `mode: 'eoa'` tries plain ECDSA recovery first, so an EOA login needs
 * no RPC round trip and keeps working while the RPC is down. An RPC failure for a contract wallet is a
 * rejected signature (the caller answers `signature_invalid`), never a 5xx.
 */
export function chainSignatureVerifier(rpcUrl: string): SignatureVerifier {
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: 5_000, retryCount: 1 }) })
  return async ({ address, message, signature }) => {
    try {
      return await client.verifyMessage({ address, message, signature, mode: 'eoa' })
    } catch {
      return false
    }
  }
}
