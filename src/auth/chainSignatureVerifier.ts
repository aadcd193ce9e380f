import { createPublicClient, http, verifyMessage } from 'viem'
import type { SignatureVerifier } from './LoginService.js'

/**
 * Login signatures verified through the login chain's JSON-RPC (`SERVICE_LOGIN__RPC_URL`), so smart-contract
 * wallets sign in as many x402 payers on Base do: a deployed contract answers EIP-1271 `isValidSignature`, a
 * not-yet-deployed one sends an EIP-6492 wrapper (factory + calldata) that viem checks with its deployless
 * universal validator in one `eth_call`. Plain ECDSA recovery is tried first, locally, so an EOA login needs no
 * RPC round trip and keeps working while the RPC is down. An RPC failure for a contract wallet is a rejected
 * signature (the caller answers `signature_invalid`), never a 5xx.
 *
 * The trust this is: whatever answers that RPC decides every signature ECDSA does not, so whoever controls it can
 * log in as any wallet. It is pinned to the login chain: its `eth_chainId` must equal `SERVICE_LOGIN__CHAIN_ID`,
 * asked once when the verifier is made (at start) and cached. A mismatch refuses every RPC-decided signature
 * until restart; an RPC that cannot be reached is asked again on the next contract-wallet login. (`https` unless
 * loopback is enforced where the URL is read, `loadConfig`.)
 */
export function chainSignatureVerifier(rpcUrl: string, chainId: number): SignatureVerifier {
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: 5_000, retryCount: 1 }) })
  let pinned: Promise<boolean> | undefined
  const onLoginChain = (): Promise<boolean> =>
    (pinned ??= client.getChainId().then(
      (id) => id === chainId,
      () => {
        pinned = undefined
        return false
      },
    ))
  void onLoginChain()
  return async ({ address, message, signature }) => {
    try {
      if (await verifyMessage({ address, message, signature }).catch(() => false)) return true
      if (!(await onLoginChain())) return false
      return await client.verifyMessage({ address, message, signature })
    } catch {
      return false
    }
  }
}
