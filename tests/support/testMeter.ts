import type { Kysely } from 'kysely'
import { CostQuota } from '../../src/auth/CostQuota.js'
import type { CostPayments } from '../../src/cost/CostPayments.js'
import { LlmMetrics } from '../../src/cost/LlmMetrics.js'
import { Meter } from '../../src/cost/meter/Meter.js'
import { UsageLedger } from '../../src/cost/UsageLedger.js'
import type { Database } from '../../src/db/Database.js'
import { ModelServerPool } from '../../src/modelserverClient/ModelServerPool.js'
import { createCapturingLogger } from './createCapturingLogger.js'

/**
 * The meter as the gateway builds it, over the model server at `modelServerUrl` (a real pool, over HTTP) and
 * the test's database: `payments` as the test configures them, a quota of `quota` calls a day (default none:
 * every call past it).
 */
export function testMeter(o: { db: Kysely<Database>; modelServerUrl: string; payments: CostPayments; quota?: CostQuota }): Meter {
  return new Meter({
    pool: new ModelServerPool({ baseUrls: [o.modelServerUrl], timeoutMs: 5_000 }),
    quota: o.quota ?? new CostQuota(o.db, 0),
    payments: o.payments,
    usage: new UsageLedger(o.db, () => Math.floor(Date.now() / 1000)),
    metrics: new LlmMetrics(['svc-tiny-chat:latest']),
    logger: createCapturingLogger().logger,
    defaultModel: 'svc-tiny-chat:latest',
  })
}
