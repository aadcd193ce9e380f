import { Counter, Gauge, Registry } from 'prom-client'
import { readStorageConfig } from '../../storage/config.js'
import { Ledger } from '../../storage/Ledger.js'
import { StorageService } from '../../storage/StorageService.js'
import { StorageWorker } from '../../storage/StorageWorker.js'
import { sweepTemporaryFiles } from '../../storage/sweepTemporaryFiles.js'
import { readX402Config } from '../../x402/config.js'
import type { DomainInit, DomainPlugin } from '../DomainPlugin.js'

/**
 * Paid storage: reads `SERVICE_STORAGE__*`, `SERVICE_X402__*`, `SERVICE_ALGOD__*` and `FACILITATOR_TOKEN`,
 * builds the service over the main database, and runs the background worker (queued-upload retries,
 * verification and, with `SERVICE_STORAGE__ATTESTOR_KEY`, attestation) while the app is up; at start, removes the
 * temporary upload files a killed process left.
 */
export const initStorage: DomainInit = (core) => {
  const env = { ...core.env, SERVICE_DATA_DIR: core.config.dataDir, SERVICE_PUBLIC_ORIGIN: core.config.publicOrigin }
  // both readers throw the core's ConfigError (src/config), which stops the start naming the variable
  const storage = readStorageConfig(env)
  const x402 = readX402Config(env)
  const metrics = new Registry()
  const balance = new Gauge({ name: 'storage_upstream_balance_winc', help: 'Prepaid upstream credit of the service, in winc, as last read.', registers: [metrics] })
  const low = new Gauge({ name: 'storage_upstream_credit_low', help: '1 while the upstream credit is below SERVICE_STORAGE__CREDIT_LOW_WINC.', registers: [metrics] })
  const topUps = new Counter({ name: 'storage_upstream_topups_total', help: 'Automatic top-ups of the upstream credit.', registers: [metrics] })
  const failovers = new Counter({ name: 'x402_facilitator_failovers_total', help: 'Facilitator calls moved to the next facilitator.', labelNames: ['step'], registers: [metrics] })
  const service = new StorageService({
    storage,
    x402,
    ledger: new Ledger(core.db),
    logger: core.logger,
    events: core.catalogue,
    onCreditBalance: (winc) => {
      balance.set(Number(winc))
      low.set(winc < storage.creditLowWinc ? 1 : 0)
    },
    onTopUp: () => topUps.inc(),
    onFacilitatorFailover: ({ step }) => failovers.inc({ step }),
    instanceId: core.instance.id,
    rails: core.rails,
  })
  const worker = new StorageWorker({ service, logger: core.logger, leaseS: core.instance.leaseS })
  const missing = service.missingSettings()
  if (missing.length > 0) core.logger.warn({ missing }, 'paid storage not configured: POST /store answers 503 until these are set')
  return {
    services: { storage: service, ...(missing.length === 0 ? { healthChecks: service.healthChecks() } : {}) },
    metrics,
    start: async () => {
      const removed = await sweepTemporaryFiles(service.spoolTmpDir)
      if (removed > 0) core.logger.info({ removed, dir: service.spoolTmpDir }, 'removed temporary upload files left by an earlier process')
      worker.start()
    },
    // a rolling restart: no new queued upload is taken from the signal on (peers take them)
    drain: () => worker.stop(),
    // what this instance still holds goes back to the queue now, for a peer to take without waiting for the lease
    close: async () => {
      await worker.stop()
      await worker.handOver()
    },
  }
}

export const storageDomain: DomainPlugin = { name: 'storage', create: initStorage }
