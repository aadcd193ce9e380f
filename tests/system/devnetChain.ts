/**
 * A chain of the devnet a started system runs (its devnet.json), in the shape the x402 test clients take, and the
 * devnet USDC balance of an address on it: what tests against `npm start` need to pay and to check what moved.
 */
import { createPublicClient, http } from 'viem'
import { localChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import type { DevnetInfo } from '../../devnet/startDevnet.js'
import type { PayableChain } from '../storage/harness.js'

export function devnetChain(devnet: DevnetInfo, network: keyof DevnetInfo['chains']): PayableChain {
  const c = devnet.chains[network]
  return { chain: localChain(c.chainId, c.rpcUrl), url: c.rpcUrl, network, tokenAddress: c.usdc }
}

export const publicClient = (chain: PayableChain) => createPublicClient({ chain: chain.chain, transport: http(chain.url) })

export const usdcBalance = (chain: PayableChain, who: `0x${string}`) =>
  publicClient(chain).readContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>
