/**
 * One local chain: Anvil with the given chain id, the devnet USDC (contracts/src/devnet/UsdcToken.sol)
 * placed at start, and USDC minted to the funded test payers (accounts 2…5).
 *
 * The token sits where the real USDC sits on that network (Base `0x8335…2913` on eip155:8453, Ethereum
 * `0xA0b8…eB48` on eip155:1; the table is @x402/evm's DEFAULT_ASSETS, the one stock x402 clients allow by
 * default), so a stock client with its default spend controls pays the devnet as it would pay mainnet. It is
 * placed the way it would be deployed: the constructor runs as account 0 (`debug_traceCall` of the creation
 * code), and the runtime code and the storage it wrote are set at the canonical address with
 * `anvil_setCode` / `anvil_setStorageAt`. Account 0 is the owner (the only minter). A chain id without a
 * canonical USDC gets the token at the address account 0 would deploy it to at nonce 0. Permit2 and x402's
 * `upto` proxy are placed the same way, and the payers approve Permit2 (placePermit2.ts); so are x402's
 * `batch-settlement` escrow, its deposit collector and Multicall3 (placeBatchSettlement.ts).
 */
import { getDefaultAsset } from '@x402/evm'
import { createPublicClient, createWalletClient, defineChain, getAddress, getContractAddress, http, type Chain, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadArtifact } from '../../contracts/compile.js'
import { anvilAccount, DEPLOYER_INDEX, payerAccounts } from '../accounts.js'
import { placeBatchSettlement } from './placeBatchSettlement.js'
import { approvePermit2ForPayers, placePermit2 } from './placePermit2.js'
import { rpc, startAnvil, type AnvilInstance } from './startAnvil.js'

export const USDC_SOURCE = 'devnet/UsdcToken.sol'
/** 1,000,000 USDC per payer (6 decimals). */
export const DEFAULT_PAYER_USDC = 1_000_000n * 10n ** 6n

export function usdcArtifact() {
  return loadArtifact(USDC_SOURCE, 'UsdcToken')
}

/** The network's real USDC address (and EIP-712 domain), or undefined when @x402/evm knows none. */
export function canonicalUsdc(chainId: number): { address: `0x${string}`; name: string; version: string } | undefined {
  try {
    const a = getDefaultAsset(`eip155:${chainId}`, 'USDC')
    return { address: getAddress(a.asset), name: a.name, version: a.version }
  } catch {
    return undefined
  }
}

type PrestateDiff = { post: Record<string, { code?: Hex; storage?: Record<Hex, Hex> }> }

/**
 * Runs `creation` as a contract creation by `from` without sending it, and sets the code and storage it
 * would leave at `at`. Immutables keep the would-be address; EIP-712 contracts (OpenZeppelin's EIP712)
 * rebuild their domain separator from `address(this)` when it differs, so signatures bind `at`.
 */
export async function placeContract(url: string, from: `0x${string}`, creation: Hex, at: `0x${string}`): Promise<void> {
  const nonce = BigInt(await rpc<Hex>(url, 'eth_getTransactionCount', [from, 'latest']))
  const wouldBe = getContractAddress({ from, nonce }).toLowerCase()
  const trace = await rpc<PrestateDiff>(url, 'debug_traceCall', [
    { from, data: creation, gas: '0x1c9c380' },
    'latest',
    { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
  ])
  const created = Object.entries(trace.post).find(([address]) => address.toLowerCase() === wouldBe)?.[1]
  if (!created?.code || created.code === '0x') throw new Error('the constructor left no code')
  await rpc(url, 'anvil_setCode', [at, created.code])
  for (const [slot, value] of Object.entries(created.storage ?? {})) await rpc(url, 'anvil_setStorageAt', [at, slot, value])
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

    const tokenAddress = canonicalUsdc(opts.chainId)?.address ?? getContractAddress({ from: deployer.address, nonce: 0n })
    await placeContract(anvil.url, deployer.address, artifact.bytecode, tokenAddress)
    // x402 `upto` (Permit2 witness transfers through x402's proxy): placed at their mainnet addresses.
    await placePermit2(anvil.url, deployer.address)
    // x402 `batch-settlement` (one deposit, many vouchers, claims in batches): the escrow and its collector.
    await placeBatchSettlement(anvil.url, deployer.address)

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
    const approved = await approvePermit2ForPayers(chain, anvil.url, tokenAddress)
    if (approved) {
      const r = await pub.waitForTransactionReceipt({ hash: approved, pollingInterval: 50 })
      if (r.status !== 'success') throw new Error('Permit2 approval failed')
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
