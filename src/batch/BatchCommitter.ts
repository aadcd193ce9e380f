import { type Address, type Hex, parseEventLogs } from 'viem'
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
}

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
        throw new BatchCommitFailedError(`commitBatch could not be sent: ${shortMessage(cause)}`, cause)
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
  }
}

function shortMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'shortMessage' in err && typeof err.shortMessage === 'string') return err.shortMessage
  return err instanceof Error ? err.message : String(err)
}
