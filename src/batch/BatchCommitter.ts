import { type Address, BaseError, type Hex, NonceTooLowError, getAbiItem, parseEventLogs } from 'viem'
import { receiptBatchesAbi } from './abi.js'
import { keyedRpcClients } from './chain.js'
import { BatchCommitFailedError } from './errors.js'

export type CommitResult = { epoch: number; txHash: Hex; blockNumber: bigint }

/** Sends `commitBatch` and follows it; the viem implementation is below, tests may fake it. */
export interface BatchCommitter {
  readonly chainId: number
  readonly contract: Address
  /** Sends the transaction; resolves with its hash as soon as the node accepted it. */
  send(root: Hex, leafCount: number, arweaveTx: Hex): Promise<Hex>
  /** Waits for a sent transaction and reads the epoch from its `RootCommitted` event. */
  wait(txHash: Hex): Promise<CommitResult>
  /** The chain's latest block (recorded before a send, so a run taking over knows where to look). */
  latestBlock(): Promise<bigint>
  /**
   * The first `RootCommitted` of `root` by the contract from `fromBlock` on (null: the last `LOG_WINDOW`
   * blocks), with its transaction; undefined when there is none: whether a commit a stopped run may have
   * sent reached the chain.
   */
  findCommit(root: Hex, fromBlock: bigint | null): Promise<CommitResult | undefined>
}

/** Blocks per `eth_getLogs` query (and how far back `findCommit` looks without a starting block). */
export const LOG_WINDOW = 50_000n
const rootCommitted = getAbiItem({ abi: receiptBatchesAbi, name: 'RootCommitted' })

export type ViemBatchCommitterOptions = {
  rpcUrl: string
  /** Key of an address holding ATTESTOR_ROLE. */
  attestorKey: Hex
  contract: Address
  chainId: number
  pollingIntervalMs?: number
  timeoutMs?: number
}

export function viemBatchCommitter(opts: ViemBatchCommitterOptions): BatchCommitter {
  const { account, pub, wallet } = keyedRpcClients(opts.rpcUrl, opts.chainId, opts.attestorKey)
  return {
    chainId: opts.chainId,
    contract: opts.contract,
    async send(root, leafCount, arweaveTx) {
      for (let attempt = 1; ; attempt++) {
        try {
          // simulate first so a revert (missing role, wrong contract) surfaces with its reason, unsent
          const { request } = await pub.simulateContract({
            account,
            address: opts.contract,
            abi: receiptBatchesAbi,
            functionName: 'commitBatch',
            args: [root, BigInt(leafCount), arweaveTx],
          })
          return await wallet.writeContract(request)
        } catch (cause) {
          // Another sender of the same key (a replica's run, the attestor) took the nonce this one read: the node
          // refused the transaction, nothing was sent — read the nonce again and send.
          if (attempt < NONCE_ATTEMPTS && nonceTaken(cause)) {
            await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200))
            continue
          }
          throw new BatchCommitFailedError(`commitBatch could not be sent: ${shortMessage(cause)}`, cause)
        }
      }
    },
    async wait(txHash) {
      const receipt = await pub.waitForTransactionReceipt({
        hash: txHash,
        pollingInterval: opts.pollingIntervalMs ?? 500,
        timeout: opts.timeoutMs ?? 120_000,
      })
      if (receipt.status !== 'success') throw new BatchCommitFailedError(`commitBatch reverted (tx ${txHash})`)
      const [event] = parseEventLogs({ abi: receiptBatchesAbi, eventName: 'RootCommitted', logs: receipt.logs }).filter(
        (l) => l.address.toLowerCase() === opts.contract.toLowerCase(),
      )
      if (!event) throw new BatchCommitFailedError(`commitBatch tx ${txHash} emitted no RootCommitted`)
      return { epoch: Number(event.args.epoch), txHash, blockNumber: receipt.blockNumber }
    },
    // not a number viem kept from an earlier read: the commit sought may be newer
    latestBlock: () => pub.getBlockNumber({ cacheTime: 0 }),
    async findCommit(root, fromBlock) {
      const latest = await pub.getBlockNumber({ cacheTime: 0 })
      for (let from = fromBlock ?? (latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n); from <= latest; from += LOG_WINDOW) {
        const to = from + LOG_WINDOW - 1n < latest ? from + LOG_WINDOW - 1n : latest
        const logs = await pub.getLogs({ address: opts.contract, event: rootCommitted, fromBlock: from, toBlock: to })
        const hit = logs.find((l) => l.args.root?.toLowerCase() === root.toLowerCase())
        if (hit) return { epoch: Number(hit.args.epoch), txHash: hit.transactionHash, blockNumber: hit.blockNumber }
      }
      return undefined
    },
  }
}

/** Sends of one commit when other senders of the key take its nonce first. */
const NONCE_ATTEMPTS = 5

/** The node refused a transaction for its nonce: one the key already used, or one a pending transaction holds. */
function nonceTaken(err: unknown): boolean {
  if (err instanceof BaseError && err.walk((e) => e instanceof NonceTooLowError)) return true
  return /nonce (?:too low|provided for the transaction is lower)|replacement transaction underpriced/i.test(shortMessage(err) + String((err as Error)?.message ?? ''))
}

function shortMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'shortMessage' in err && typeof err.shortMessage === 'string') return err.shortMessage
  return err instanceof Error ? err.message : String(err)
}
