import type { Kysely } from 'kysely'
import type { EventSink } from '../catalogue/EventSink.js'
import type { Env } from '../config/env.js'
import type { Database } from '../db/Database.js'
import { readStorageConfig } from '../storage/config.js'
import { loadArweaveSigner } from '../storage/signDataItem.js'
import { UpstreamClient } from '../storage/UpstreamClient.js'
import type { BatchConfig } from '../batch/config.js'
import { createBatchRunner } from '../batch/createBatchRunner.js'
import { type ReceiptView, getReceiptProof, receiptView } from '../batch/getReceiptProof.js'
import { ledgerReceiptSource } from '../batch/ledgerReceiptSource.js'
import type { BatchLogger, BatchRunResult } from '../batch/runBatch.js'
import { type BatchScheduler, startBatchScheduler } from '../batch/scheduler.js'
import { upstreamTreeUploader } from '../storage/upstreamTreeUploader.js'

export type BatchServiceDependencies = {
  db: Kysely<Database>
  /** Read at each run for the storage upstream and the Arweave key (`SERVICE_STORAGE__*`, src/storage/config.ts). */
  env: Env
  events?: EventSink
  log: BatchLogger
}

export type BatchService = {
  /** The `Receipt` body of a receipt, with its proof once committed (getReceiptProof.ts); throws ReceiptNotFoundError. */
  receipt(arTxId: string): Promise<ReceiptView>
  /** One batch run now (what the daily schedule and `npm run batch` run); `cutoff`: only uploads paid before it. */
  runOnce(options?: { cutoff?: number }): Promise<BatchRunResult>
  /** Starts the daily schedule (`SERVICE_BATCH__DAILY_AT`, UTC) when `config.enabled`; otherwise does nothing. */
  start(): void
  stop(): void
}

/**
 * The receipt batch of the gateway: the receipt lookup always; the daily run when enabled. The chain,
 * contract and Arweave key are resolved at each run, so a deployment written after the gateway started is
 * picked up; a failed run is logged and resumed by the next one (or by `npm run batch`). Every replica runs the
 * schedule: at the daily time one run takes each batch and the others leave it (runBatch.ts), without an error.
 */
export function createBatchService(config: BatchConfig, deps: BatchServiceDependencies): BatchService {
  const { db, env, events, log } = deps
  const source = ledgerReceiptSource(db)
  let scheduler: BatchScheduler | undefined

  const runOnce = async (options: { cutoff?: number } = {}): Promise<BatchRunResult> => {
    const storage = readStorageConfig(env)
    const upstream = new UpstreamClient({ paymentUrl: storage.paymentUrl, uploadUrl: storage.uploadUrl })
    const signer = await loadArweaveSigner(storage.arweaveJwkPath)
    const run = await createBatchRunner(config, { db, source, uploader: upstreamTreeUploader(upstream, signer), events, log })
    return run(options)
  }

  return {
    receipt: async (arTxId) => receiptView(await getReceiptProof(db, source, arTxId)),
    runOnce,
    start() {
      if (!config.enabled || scheduler) return
      scheduler = startBatchScheduler({
        dailyAt: config.dailyAt,
        run: async () => {
          const result = await runOnce()
          log.info(
            { created: result.created.length, resumed: result.resumed.length, skipped: result.skipped.length, in_progress: result.inProgress.length },
            'daily receipt batch done',
          )
        },
        onError: (err) => log.error({ err }, 'daily receipt batch failed'),
      })
      log.info({ next_run_at: new Date(scheduler.nextRunAt()).toISOString() }, 'receipt batch scheduled')
    },
    stop() {
      scheduler?.stop()
    },
  }
}
