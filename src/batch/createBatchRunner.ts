import type { Kysely } from 'kysely'
import type { EventSink } from '../catalogue/EventSink.js'
import type { Database } from '../db/Database.js'
import { viemBatchCommitter } from './BatchCommitter.js'
import { rpcChainId } from './chain.js'
import type { ReceiptSource } from './ReceiptSource.js'
import type { TreeUploader } from './TreeUploader.js'
import { type BatchConfig, resolveReceiptBatchesAddress } from './config.js'
import { BatchConfigError } from './errors.js'
import { ledgerReceiptSource } from './ledgerReceiptSource.js'
import { type BatchLogger, type BatchRunResult, runBatch } from './runBatch.js'

export type BatchRunnerDependencies = {
  db: Kysely<Database>
  uploader: TreeUploader
  source?: ReceiptSource
  events?: EventSink
  log?: BatchLogger
}

/** Wires `runBatch` to the configured chain (viem), the storage ledger and the tree uploader. */
export async function createBatchRunner(
  config: BatchConfig,
  deps: BatchRunnerDependencies,
): Promise<(opts?: { cutoff?: number }) => Promise<BatchRunResult>> {
  if (!config.attestorKey) throw new BatchConfigError('SERVICE_BATCH__ATTESTOR_KEY is not set; the batch cannot commit')
  const chainId = await rpcChainId(config.rpcUrl)
  const committer = viemBatchCommitter({
    rpcUrl: config.rpcUrl,
    attestorKey: config.attestorKey,
    contract: resolveReceiptBatchesAddress(config, chainId),
    chainId,
  })
  const source = deps.source ?? ledgerReceiptSource(deps.db)
  return (opts = {}) =>
    runBatch({
      db: deps.db,
      source,
      uploader: deps.uploader,
      committer,
      cutoff: opts.cutoff,
      maxLeaves: config.maxLeaves,
      appName: config.appName,
      events: deps.events,
      log: deps.log,
    })
}
