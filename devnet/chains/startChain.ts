/**
 * One local chain: Anvil with the given chain id, the devnet USDC (contracts/src/devnet/UsdcToken.sol)
 * deployed by account 0 at start, and USDC minted to the funded test payers (accounts 2…5).
 * Deployed by account 0 at nonce 0, so the token address is the same on every start and on both chains.
 */
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Chain } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadArtifact } from '../../contracts/compile.js'
import { anvilAccount, DEPLOYER_INDEX, payerAccounts } from '../accounts.js'
import { startAnvil, type AnvilInstance } from './startAnvil.js'

export const USDC_SOURCE = 'devnet/UsdcToken.sol'
/** 1,000,000 USDC per payer (6 decimals). */
export const DEFAULT_PAYER_USDC = 1_000_000n * 10n ** 6n

export function usdcArtifact() {
  return loadArtifact(USDC_SOURCE, 'UsdcToken')
}

export function localChain(chainId: number, url: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === 8453 ? 'Local Base' : chainId === 1 ? 'Local Ethereum' : `Local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  })
}

export interface ChainOptions {
  chainId: number
  port?: number
  /** USDC minted to each funded payer (atomic units). */
  payerUsdc?: bigint
  /** Extra addresses to fund with USDC (atomic units). */
  fund?: { address: `0x${string}`; amount: bigint }[]
  blockTime?: number
}

export interface LocalChain {
  url: string
  chainId: number
  network: `eip155:${number}`
  tokenAddress: `0x${string}`
  chain: Chain
  anvil: AnvilInstance
  close(): Promise<void>
}

export async function startChain(opts: ChainOptions): Promise<LocalChain> {
  const artifact = usdcArtifact()
  const anvil = await startAnvil({ chainId: opts.chainId, port: opts.port, blockTime: opts.blockTime })
  try {
    const chain = localChain(opts.chainId, anvil.url)
    const transport = http(anvil.url, { retryCount: 0 })
    const deployer = privateKeyToAccount(anvilAccount(DEPLOYER_INDEX).privateKey)
    const wallet = createWalletClient({ chain, transport, account: deployer })
    const pub = createPublicClient({ chain, transport, pollingInterval: 50 })

    const deployHash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode })
    const receipt = await pub.waitForTransactionReceipt({ hash: deployHash, pollingInterval: 50 })
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error('UsdcToken deployment failed')
    const tokenAddress = getAddress(receipt.contractAddress)

    const amount = opts.payerUsdc ?? DEFAULT_PAYER_USDC
    const mints = [...payerAccounts().map((p) => ({ address: p.address, amount })), ...(opts.fund ?? [])]
    let last: `0x${string}` | undefined
    let nonce = await pub.getTransactionCount({ address: deployer.address })
    for (const m of mints) {
      last = await wallet.writeContract({
        address: tokenAddress,
        abi: artifact.abi,
        functionName: 'mint',
        args: [m.address, m.amount],
        nonce: nonce++,
      })
    }
    if (last) {
      const r = await pub.waitForTransactionReceipt({ hash: last, pollingInterval: 50 })
      if (r.status !== 'success') throw new Error('USDC mint failed')
    }
    return {
      url: anvil.url,
      chainId: opts.chainId,
      network: `eip155:${opts.chainId}`,
      tokenAddress,
      chain,
      anvil,
      close: () => anvil.close(),
    }
  } catch (e) {
    await anvil.close()
    throw e
  }
}
