import { getReceiptProof } from '../../batch/getReceiptProof.js'
import { ledgerReceiptSource } from '../../batch/ledgerReceiptSource.js'
import { readBatchConfig } from '../../batch/config.js'
import { createBatchRunner } from '../../batch/createBatchRunner.js'
import type { BatchRunResult } from '../../batch/runBatch.js'
import { type BatchScheduler, startBatchScheduler } from '../../batch/scheduler.js'
import { upstreamTreeUploader } from '../../batch/upstreamTreeUploader.js'
import { readStorageConfig } from '../../storage/config.js'
import { UpstreamClient } from '../../storage/UpstreamClient.js'
import { loadArweaveSigner } from '../../storage/signDataItem.js'
import type { DomainInit } from '../types.js'

/**
 * Start hook of the receipt batch: the receipt lookup for `GET /store/receipts/{ar_tx_id}` always; the
 * daily schedule (`SERVICE_BATCH__DAILY_AT`, UTC) when `SERVICE_BATCH__ENABLED` (default: on when
 * `SERVICE_BATCH__ATTESTOR_KEY` is set). The chain, contract and Arweave key are resolved at each run, so
 * a deployment written after the gateway started is picked up; a failed run is logged and resumed by the
 * next one (or by `npm run batch`).
 */
export const batchInit: DomainInit = (core) => {
  const env = { ...core.env, SERVICE_DATA_DIR: core.config.dataDir }
  const config = readBatchConfig(env)
  const source = ledgerReceiptSource(core.db)
  let scheduler: BatchScheduler | undefined

  const runOnce = async (): Promise<BatchRunResult> => {
    const storage = readStorageConfig(env)
    const upstream = new UpstreamClient({ paymentUrl: storage.paymentUrl, uploadUrl: storage.uploadUrl })
    const signer = await loadArweaveSigner(storage.arweaveJwkPath)
    const run = await createBatchRunner(config, {
      db: core.db,
      source,
      uploader: upstreamTreeUploader(upstream, signer),
      events: core.catalogue,
      log: {
        info: (o, m) => core.logger.info(o, m),
        warn: (o, m) => core.logger.warn(o, m),
        error: (o, m) => core.logger.error(o, m),
      },
    })
    return run()
  }

  return {
    services: { batch: { receipt: (arTxId: string) => getReceiptProof(core.db, source, arTxId) } },
    start: () => {
      if (!config.enabled) return
      scheduler = startBatchScheduler({
        dailyAt: config.dailyAt,
        run: async () => {
          const result = await runOnce()
          core.logger.info(
            { created: result.created.length, resumed: result.resumed.length, skipped: result.skipped.length },
            'daily receipt batch done',
          )
        },
        onError: (err) => core.logger.error({ err }, 'daily receipt batch failed'),
      })
      core.logger.info({ next_run_at: new Date(scheduler.nextRunAt()).toISOString() }, 'receipt batch scheduled')
    },
    close: () => scheduler?.stop(),
  }
}
