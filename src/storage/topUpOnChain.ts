import { createPublicClient, createWalletClient, erc20Abi, http, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { TopUpConfig } from './config.js'

export type TopUpTransfer = { txHash: Hex; from: string; to: string; amountAtomic: bigint }

/**
 * Pays the upstream from the service's own funds on the configured rail: an ERC-20 `transfer` of
 * `amountAtomic` USDC from the top-up key to the upstream's deposit address, waited for until mined
 * successfully. The key never leaves this function (no log, no error message carries it).
 */
export async function transferTopUp(config: TopUpConfig, depositAddress: `0x${string}`): Promise<TopUpTransfer> {
  const account = privateKeyToAccount(config.key)
  const transport = http(config.rpcUrl, { retryCount: 1 })
  const pub = createPublicClient({ transport })
  const chainId = await pub.getChainId()
  const chain = { id: chainId, name: `chain ${chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [config.rpcUrl] } } }
  const wallet = createWalletClient({ account, chain, transport })
  const txHash = await wallet.writeContract({ address: config.token, abi: erc20Abi, functionName: 'transfer', args: [depositAddress, config.amountAtomic] })
  const receipt = await pub.waitForTransactionReceipt({ hash: txHash, pollingInterval: 250, timeout: 60_000 })
  if (receipt.status !== 'success') throw new Error(`top-up transfer ${txHash} reverted`)
  return { txHash, from: account.address, to: depositAddress, amountAtomic: config.amountAtomic }
}
