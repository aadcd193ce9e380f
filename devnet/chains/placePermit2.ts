/**
 * Permit2 and x402's `upto` proxy on a devnet chain: what @x402/evm's `upto` scheme calls
 * (the client signs a Permit2 witness transfer whose spender is the proxy; the facilitator calls the proxy's
 * `settle`). @x402/evm ships their addresses and ABIs but no bytecode, so the devnet compiles its own
 * stand-ins (contracts/src/devnet/Permit2.sol, UptoPermit2Proxy.sol) and places them where mainnet has the
 * real ones — Permit2's canonical address and the proxy's — the way the USDC is placed (constructor run as
 * account 0, code and storage set there). The funded payers then approve Permit2 for the token once, as a
 * Permit2 user does once per token, so stock x402 clients pay `upto` out of the box.
 */
import { createWalletClient, encodeDeployData, http, maxUint256, type Chain, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadArtifact } from '../../contracts/compile.js'
import { payerAccounts } from '../accounts.js'
import { placeContract } from './startChain.js'

/** Permit2's canonical address (the same on every chain). */
export const PERMIT2_ADDRESS = '0x000000000022D473030F116dDEE9F6B43aC78BA3' as const
/** Where @x402/evm's `upto` facilitator and client expect `x402UptoPermit2Proxy`. */
export const UPTO_PROXY_ADDRESS = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002' as const

export const permit2Artifact = () => loadArtifact('devnet/Permit2.sol', 'Permit2')
export const uptoProxyArtifact = () => loadArtifact('devnet/UptoPermit2Proxy.sol', 'UptoPermit2Proxy')

const approveAbi = [
  { type: 'function', name: 'approve', stateMutability: 'nonpayable', inputs: [{ name: 'spender', type: 'address' }, { name: 'value', type: 'uint256' }], outputs: [{ type: 'bool' }] },
] as const

/** Places Permit2 and the proxy (bound to it) on the chain at `url`, created as `deployer` would. */
export async function placePermit2(url: string, deployer: `0x${string}`): Promise<void> {
  await placeContract(url, deployer, permit2Artifact().bytecode, PERMIT2_ADDRESS)
  const proxy = uptoProxyArtifact()
  const creation = encodeDeployData({ abi: proxy.abi, bytecode: proxy.bytecode, args: [PERMIT2_ADDRESS] }) as Hex
  await placeContract(url, deployer, creation, UPTO_PROXY_ADDRESS)
}

/** Every funded payer approves Permit2 for `token` (unlimited: Permit2's usual one-time approval). Returns the last transaction. */
export async function approvePermit2ForPayers(chain: Chain, url: string, token: `0x${string}`): Promise<`0x${string}` | undefined> {
  let last: `0x${string}` | undefined
  for (const payer of payerAccounts()) {
    const wallet = createWalletClient({ chain, transport: http(url, { retryCount: 0 }), account: privateKeyToAccount(payer.privateKey) })
    last = await wallet.writeContract({ address: token, abi: approveAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] })
  }
  return last
}
