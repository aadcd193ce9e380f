import { chainSignatureVerifier } from '../auth/chainSignatureVerifier.js'
import { CostQuota } from '../auth/CostQuota.js'
import { SignInWithX } from '../auth/SignInWithX.js'
import { readTokenPricing } from '../cost/config.js'
import { CostPayments } from '../cost/CostPayments.js'
import { LlmMetrics } from '../cost/LlmMetrics.js'
import { readMaxCallS } from '../cost/paymentWindow.js'
import { UsageLedger } from '../cost/UsageLedger.js'
import type { DatabaseHandle } from '../db/createDatabase.js'
import { readBatchSettlementConfig } from '../x402/batch/config.js'
import { createBatchSettlement } from '../x402/batch/createBatchSettlement.js'
import type { CoreGraph, CoreInputs, CoreSettings } from './createCoreServices.js'

/** The settings of cost calls, read before the database opens (with `readCoreSettings`). */
export function readCostSettings(env: CoreInputs['env']) {
  return { batch: readBatchSettlementConfig(env), tokenPricing: readTokenPricing(env), maxCallS: readMaxCallS(env) }
}

export type CostSettings = ReturnType<typeof readCostSettings>

/**
 * What cost calls need: the daily quota, x402 payments past it (over the rails of paid storage, with
 * `batch-settlement` channels and sign-in-with-x), the usage ledger, per-model metrics and the one meter of
 * every call that makes the model server work.
 */
export function createCostServices(p: CoreInputs, settings: CoreSettings & { cost: CostSettings }, database: DatabaseHandle, core: CoreGraph['services']) {
  const { config, logger, now } = p
  const { db } = database
  // x402 `batch-settlement`: channels in the database, claims in batches by whichever instance holds the lease
  const batchSettlement = createBatchSettlement({ db, x402: settings.x402, config: settings.cost.batch, holder: core.instance.id, logger, now })
  const loginVerifier = config.login.rpcUrl ? chainSignatureVerifier(config.login.rpcUrl, config.login.chainId) : undefined
  // x402 sign-in-with-x beside Sign-In with Ethereum: the same chain, statement and signature verifier
  const siwx = new SignInWithX({ db, publicOrigin: config.publicOrigin, chains: [`eip155:${config.login.chainId}`], statement: config.login.statement, verifySignature: loginVerifier, now })
  const quota = new CostQuota(db, config.quota.costCallsPerDay, now, config.quota.costCallsPerNetworkPerDay, database.backgroundCommit)
  // Paying past the quota uses the rails of paid storage (`SERVICE_X402__*`, `FACILITATOR_TOKEN`).
  const costPayments = new CostPayments({
    db,
    x402: settings.x402,
    rails: settings.rails,
    priceAtomic: config.quota.pricePerCallAtomic,
    tokenPricing: settings.cost.tokenPricing,
    publicOrigin: config.publicOrigin,
    events: core.catalogue,
    logger,
    now,
    maxCallS: settings.cost.maxCallS,
    instanceId: core.instance.id,
    batch: batchSettlement,
    signIn: siwx,
  })
  const usage = new UsageLedger(db, now, database.groupCommit ?? database.backgroundCommit)
  const llmMetrics = new LlmMetrics([config.modelServer.chatModel, config.modelServer.embedModel])
  const meter = core.modelServer.meter({ quota, payments: costPayments, usage, metrics: llmMetrics, logger, defaultModel: config.modelServer.chatModel })
  return { loginVerifier, services: { siwx, quota, costPayments, batchSettlement, usage, llmMetrics, meter } }
}
