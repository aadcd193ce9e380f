import { readBatchConfig } from '../../batch/config.js'
import { createBatchService } from '../createBatchService.js'
import type { DomainInit, DomainPlugin } from '../DomainPlugin.js'

/**
 * The receipt batch: reads `SERVICE_BATCH__*` and wires `createBatchService` (../createBatchService.ts): the
 * receipt lookup for `GET /store/receipts/{ar_tx_id}` always, the daily schedule when `SERVICE_BATCH__ENABLED`
 * (default: on when `SERVICE_BATCH__ATTESTOR_KEY` is set).
 */
export const initBatch: DomainInit = (core) => {
  const env = { ...core.env, SERVICE_DATA_DIR: core.config.dataDir }
  const service = createBatchService(readBatchConfig(env), {
    db: core.db,
    env,
    events: core.catalogue,
    log: {
      info: (o, m) => core.logger.info(o, m),
      warn: (o, m) => core.logger.warn(o, m),
      error: (o, m) => core.logger.error(o, m),
    },
  })
  return {
    services: { batch: service },
    start: () => service.start(),
    close: () => service.stop(),
  }
}

export const batchDomain: DomainPlugin = { name: 'batch', create: initBatch }
