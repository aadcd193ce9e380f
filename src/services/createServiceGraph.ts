import { SignInWithX } from '../auth/SignInWithX.js'
import { chainSignatureVerifier } from '../auth/chainSignatureVerifier.js'
import { join } from 'node:path'
import { Counter, Gauge, Registry } from 'prom-client'
import { CostQuota } from '../auth/CostQuota.js'
import { LoginService } from '../auth/LoginService.js'
import { Catalogue } from '../catalogue/Catalogue.js'
import { CostPayments } from '../cost/CostPayments.js'
import { LlmMetrics } from '../cost/LlmMetrics.js'
import { UsageLedger } from '../cost/UsageLedger.js'
import { InstanceRegistry } from '../cluster/InstanceRegistry.js'
import { CapabilityMonitor } from '../health/CapabilityMonitor.js'
import { Readiness } from '../health/Readiness.js'
import { readinessCapabilities } from './readinessCapabilities.js'
import { resolveInstanceId } from '../cluster/resolveInstanceId.js'
import type { Env } from '../config/env.js'
import type { GatewayConfig } from '../config/loadConfig.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { createIpHasher, loadOrCreateSalt } from '../gate/createIpHasher.js'
import { PublicSet, publicSetFromDocument } from '../gate/PublicSet.js'
import { InboundMetrics } from '../marketplace/InboundMetrics.js'
import { Marketplace } from '../marketplace/Marketplace.js'
import { ModelServers } from '../cost/meter/index.js'
import { GatewayMetrics } from './GatewayMetrics.js'
import type { Logger } from '../shared/logger.js'
import { readBatchSettlementConfig } from '../x402/batch/config.js'
import { createBatchSettlement } from '../x402/batch/createBatchSettlement.js'
import { readX402Config } from '../x402/config.js'
import { readTokenPricing } from '../cost/config.js'
import { readMaxCallS } from '../cost/paymentWindow.js'
import { readBatchConfig } from '../batch/config.js'
import { ConfigError } from '../config/ConfigError.js'
import { CoreAgent } from '../llm/CoreAgent.js'
import { LlmKeys } from '../llm/LlmKeys.js'
import { OpenAiProxy } from '../llm/OpenAiProxy.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { readShadowConfig, ShadowConfigError } from '../shadow/config.js'
import { createShadowTier } from '../shadow/createShadowTier.js'
import { readStorageConfig } from '../storage/config.js'
import { readMcpConfig } from '../mcp/config.js'
import { loadMcpToolCatalog } from '../mcp/toolCatalog.js'
import { Ledger } from '../storage/Ledger.js'
import { StorageService } from '../storage/StorageService.js'
import { StorageWorker } from '../storage/StorageWorker.js'
import { createBatchService } from './createBatchService.js'
import type { CoreServices, DomainInit, DomainSetup, Services } from './types.js'
import { createRailRegistry, type RailPlugin } from '../x402/RailRegistry.js'
import { MetricsAccess } from './MetricsAccess.js'

export type ServiceGraphParameters = {
  config: GatewayConfig
  /** Payment rails registered after the configured ones (each one call; see src/x402/README.md). */
  railPlugins?: readonly RailPlugin[] | undefined
  env: Env
  /** The gateway's OpenAPI document (the gate's public set is derived from it). */
  document: Record<string, unknown>
  logger: Logger
  /** Epoch seconds. */
  now: () => number
  /** The clock was supplied by the caller (the catalogue then follows it in milliseconds). */
  clockOverridden: boolean
  /** An open database; default: opened (and migrated) from `config.databaseUrl`, closed by `close()`. */
  database?: DatabaseHandle | undefined
  /** `fetch` used for the model server (tests). */
  fetch?: typeof fetch | undefined
  /**
   * The domains, built in this order (default: `defaultDomains`: shadow, storage, batch, /llm, without the HTTP
   * security schemes; `createApp` passes `src/handlers/index.ts`'s list, which adds them).
   */
  domains?: readonly DomainInit[] | undefined
  /** Replace services after they are built (tests). */
  overrides?: Partial<Services> | undefined
}

export type ServiceGraph = {
  services: Services
  metrics: GatewayMetrics
  /** What each domain contributed (security handlers, 401 shapes, start/close). */
  setups: readonly DomainSetup[]
  /** Starts the domains' background work. */
  start: () => Promise<void>
  /**
   * The stop signal: readiness fails at once and the domains stop taking new background work (each domain's
   * `drain`, in reverse order); requests in flight go on. `close` follows.
   */
  drain: () => Promise<void>
  /**
   * Stops background work (domains in reverse order: paid storage hands what this instance still holds back to
   * the queue, for a peer to take at once), marks the instance stopped, closes the database when the graph
   * opened it.
   */
  close: () => Promise<void>
}

/**
 * The gateway's service graph, built in one place and apart from the HTTP wiring: database, catalogue,
 * metrics, arrival gate, model-server client, login, quota, marketplace, then each domain (explicit, in the
 * order given; the builders are below) adds its services. Every service is built here once, eagerly: no
 * domain builds another lazily behind a module-level map.
 */
export async function createServiceGraph(p: ServiceGraphParameters): Promise<ServiceGraph> {
  const { config, logger, now } = p
  const x402 = readX402Config(p.env) // before the database opens: a bad setting leaks nothing
  const batchConfig = readBatchSettlementConfig(p.env)
  // the MCP tools' schemas are the document's components, inlined once here
  const mcp = { catalog: loadMcpToolCatalog(p.document), config: readMcpConfig(p.env) }
  const tokenPricing = readTokenPricing(p.env)
  // the payment rails, registered once: paid storage, cost calls, discovery and the pages ask them
  const rails = createRailRegistry(x402, undefined, p.railPlugins)
  const ownsDatabase = !p.database
  const database = p.database ?? (await createDatabase({ url: config.databaseUrl, sqliteSynchronous: config.sqliteSynchronous }))

  const catalogue = new Catalogue({ db: database.db, logPath: config.catalogueLogPath, logger, now: p.clockOverridden ? () => now() * 1000 : Date.now })
  const metrics = new GatewayMetrics()
  const gate = new ArrivalGate({
    publicSet: new PublicSet(publicSetFromDocument(p.document)),
    hardGateEnabled: config.hardGateEnabled,
    events: catalogue,
    hashIp: createIpHasher(loadOrCreateSalt(config.ipHashSalt, join(config.dataDir, 'ip-hash-salt'))),
    onRedirect: () => metrics.gateRedirect(),
    onEventError: (error) => logger.error({ err: error }, 'auth.gate.redirect event could not be written'),
  })
  const instance = new InstanceRegistry({
    db: database.db,
    instanceId: resolveInstanceId(config.instance.id, config.dataDir),
    heartbeatMs: config.instance.heartbeatMs,
    leaseS: config.instance.leaseS,
    logger,
  })
  // One model server or several (routed by model, least busy first, failing over before the first byte); what
  // makes them generate goes through the meter built from them below.
  const modelServer = new ModelServers({
    baseUrls: config.modelServer.baseUrls,
    timeoutMs: config.modelServer.timeoutMs,
    refreshMs: config.modelServer.refreshMs,
    apiKey: config.modelServer.apiKey,
    fetch: p.fetch,
  })
  metrics.adopt(modelServer.registry)
  // Sessions and the agent registry are cached while the database reports every change to them.
  const changeFeed = config.cache.enabled ? database.changeFeed : undefined
  // x402 `batch-settlement`: channels in the database, claims in batches by whichever instance holds the lease
  const batchSettlement = createBatchSettlement({ db: database.db, x402, config: batchConfig, holder: instance.id, logger, now })
  const loginVerifier = config.login.rpcUrl ? chainSignatureVerifier(config.login.rpcUrl, config.login.chainId) : undefined
  // x402 sign-in-with-x beside Sign-In with Ethereum: the same chain, statement and signature verifier
  const siwx = new SignInWithX({
    db: database.db,
    publicOrigin: config.publicOrigin,
    chains: [`eip155:${config.login.chainId}`],
    statement: config.login.statement,
    verifySignature: loginVerifier,
    now,
  })
  const services = {
    config,
    db: database.db,
    dialect: database.dialect,
    logger,
    now,
    catalogue,
    gate,
    modelServer,
    inbound: new InboundMetrics(60),
    instance,
    readiness: new Readiness(),
    quota: new CostQuota(database.db, config.quota.costCallsPerDay, now, config.quota.costCallsPerNetworkPerDay),
    // Paying past the quota uses the rails of paid storage (`SERVICE_X402__*`, `FACILITATOR_TOKEN`).
    rails,
    costPayments: new CostPayments({
      db: database.db,
      x402,
      rails,
      priceAtomic: config.quota.pricePerCallAtomic,
      tokenPricing,
      publicOrigin: config.publicOrigin,
      events: catalogue,
      logger,
      now,
      maxCallS: readMaxCallS(p.env),
      instanceId: instance.id,
      batch: batchSettlement,
      signIn: siwx,
    }),
    siwx,
    batchSettlement,
    usage: new UsageLedger(database.db, now, database.backgroundCommit),
    llmMetrics: new LlmMetrics([config.modelServer.chatModel, config.modelServer.embedModel]),
    metricsText: () => metrics.text(),
    metricsAccess: new MetricsAccess(config.metricsToken),
    mcp,
  } as Services
  services.meter = modelServer.meter({
    quota: services.quota,
    payments: services.costPayments,
    usage: services.usage,
    metrics: services.llmMetrics,
    logger,
    defaultModel: config.modelServer.chatModel,
  })
  services.login = new LoginService({
    db: database.db,
    publicOrigin: config.publicOrigin,
    chainId: config.login.chainId,
    statement: config.login.statement,
    challengeTtlS: config.login.challengeTtlS,
    sessionTtlS: config.login.sessionTtlS,
    events: catalogue,
    now,
    overlordAddress: () => services.overlordAddress?.(),
    verifySignature: loginVerifier,
    changeFeed,
    onCacheEvent: metrics.cacheEventRecorder('session'),
  })
  services.marketplace = new Marketplace({
    db: database.db,
    chatModel: config.modelServer.chatModel,
    embedModel: config.modelServer.embedModel,
    now,
    roster: (company) => services.cabinetRoster?.(company) ?? Promise.resolve(undefined),
    changeFeed,
    onCacheEvent: metrics.cacheEventRecorder('agent_registry'),
  })
  const unlogFeed = changeFeed?.subscribe((change) => {
    if (change.kind === 'all' && change.reason.startsWith('change feed lost')) logger.warn({ reason: change.reason }, 'caches bypassed until the change feed is back')
    else if (change.kind === 'all' && change.reason === 'change feed listening') logger.info('caches on: change feed listening')
  })
  // PostgreSQL: the first attempt to LISTEN is over before requests come (until it succeeds, caches are bypassed).
  await changeFeed?.ready()

  // ── domains, explicitly and in order ──
  const core: CoreServices = {
    config,
    db: database.db,
    dialect: database.dialect,
    logger,
    now,
    catalogue,
    instance,
    modelServer,
    marketplace: services.marketplace,
    rails,
    databaseUrl: config.databaseUrl,
    env: p.env,
    // not gated by the cache setting: the admin tier's exported files and unlock propagation follow it
    changeFeed: database.changeFeed,
  }
  const setups: DomainSetup[] = []
  const { login, marketplace } = services // the instances that subscribed (overrides may replace them)
  const closeCaches = () => {
    login.close()
    marketplace.close()
    unlogFeed?.()
  }
  try {
    for (const init of p.domains ?? defaultDomains) setups.push(await init(core))
  } catch (error) {
    closeCaches()
    if (ownsDatabase) await database.close()
    throw error
  }
  for (const setup of setups) Object.assign(services, setup.services ?? {})
  metrics.adopt(services.llmMetrics.registry)
  for (const setup of setups) if (setup.metrics) metrics.adopt(setup.metrics)
  Object.assign(services, p.overrides ?? {})
  // What `GET /health/ready` waits for besides the replica's own phase: each configured capability, checked in the background.
  const capabilities = new CapabilityMonitor({
    capabilities: readinessCapabilities(services, p.env, config.health.checkTimeoutMs),
    intervalMs: config.health.checkIntervalMs,
    timeoutMs: config.health.checkTimeoutMs,
    onChange: (capability, state, previous) => {
      if (state.status === 'up') logger.info({ capability, previous }, `${capability} is up`)
      else logger.warn({ capability, status: state.status, detail: state.detail }, `${capability} is ${state.status}: GET /health/ready answers 503 until it is back`)
    },
  })
  services.readiness.watch(capabilities)

  return {
    services,
    metrics,
    setups,
    start: async () => {
      // The log is the record: index anything the database is missing (in the background).
      void catalogue
        .reindex()
        .then((added) => added > 0 && logger.warn({ added }, 'catalogue: re-indexed events missing from the database'))
        .catch((error: unknown) => logger.error({ err: error }, 'catalogue re-index failed'))
      // Registered before any domain starts: their background work is done in this instance's name.
      await instance.start()
      modelServer.start()
      services.costPayments.startReconciling()
      for (const setup of setups) await setup.start?.()
      capabilities.start()
      batchSettlement?.claims.start()
      services.readiness.started()
    },
    drain: async () => {
      services.readiness.drain()
      for (const setup of [...setups].reverse()) {
        try {
          await setup.drain?.()
        } catch (error) {
          logger.error({ err: error }, 'domain drain failed')
        }
      }
    },
    close: async () => {
      services.readiness.drain()
      capabilities.stop()
      modelServer.stop()
      services.costPayments.stopReconciling()
      await batchSettlement?.claims.stop().catch((error: unknown) => logger.error({ err: error }, 'batch-settlement claim job stop failed'))
      for (const setup of [...setups].reverse()) {
        try {
          await setup.close?.()
        } catch (error) {
          logger.error({ err: error }, 'domain close failed')
        }
      }
      await instance.stop().catch((error: unknown) => logger.error({ err: error }, 'instance stop failed'))
      closeCaches()
      if (ownsDatabase) await database.close()
    },
  }
}

// ── the domains: what each builds from the core services and the environment ──

/**
 * The shadow tier: reads `SHADOW_*` (a weak `SHADOW_JWT_SECRET` with an overlord address set refuses start),
 * opens the nonce store (PostgreSQL main database, or the SQLite file of `SHADOW_NONCES_PATH`), creates the
 * vault — sealed — and the cabinet service. Its bearer scheme is answered by `src/handlers/shadow/shadowSecurity.ts`.
 */
export const initShadow: DomainInit = async (core) => {
  let config
  try {
    config = readShadowConfig({ ...core.env, SERVICE_DATA_DIR: core.config.dataDir, SERVICE_PUBLIC_ORIGIN: core.config.publicOrigin })
  } catch (error) {
    if (error instanceof ShadowConfigError) throw new ConfigError(error.variable, error.shortMessage)
    throw error
  }
  const tier = await createShadowTier({
    config,
    database: { db: core.db, dialect: core.dialect, changeFeed: core.changeFeed },
    instance: core.instance ? { id: core.instance.id, heartbeatMs: core.instance.heartbeatMs, leaseS: core.instance.leaseS } : undefined,
    logger: core.logger,
    events: core.catalogue,
    now: core.now,
    onAuditFailure: (error) => core.logger.error({ err: error }, 'shadow audit event could not be written'),
    onVaultInitialised: () => core.logger.warn({ vault: 'initialised' }, 'first unlock: a new sealed vault was initialised'),
  })
  core.logger.info(
    { overlord_configured: Boolean(config.overlordAddress), nonce_store: core.dialect === 'postgres' ? 'postgres' : 'sqlite-file', vault_unlocked: false },
    'shadow tier ready (vault sealed)',
  )
  return {
    services: {
      shadow: tier,
      cabinetRoster: async (company: string) => {
        try {
          return (await tier.cabinets.roster(company)).members
        } catch (error) {
          if (error instanceof ShadowError && error.code === 'cabinet_not_found') return undefined
          throw error
        }
      },
      overlordAddress: () => config.overlordAddress,
    },
    start: () => tier.start(),
    close: () => tier.close(),
  }
}

/**
 * Paid storage: reads `SERVICE_STORAGE__*`, `SERVICE_X402__*`, `SERVICE_ALGOD__*` and `FACILITATOR_TOKEN`,
 * builds the service over the main database, and runs the background worker (queued-upload retries,
 * verification and, with `SERVICE_STORAGE__ATTESTOR_KEY`, attestation) while the app is up.
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
    start: () => worker.start(),
    // a rolling restart: no new queued upload is taken from the signal on (peers take them)
    drain: () => worker.stop(),
    // what this instance still holds goes back to the queue now, for a peer to take without waiting for the lease
    close: async () => {
      await worker.stop()
      await worker.handOver()
    },
  }
}

/**
 * The receipt batch: reads `SERVICE_BATCH__*` and wires `createBatchService` (./createBatchService.ts): the
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

/**
 * `/llm`: the wallets' API keys, and the `/llm/v1` proxy and `/coreagent` over the core's
 * model-server client and marketplace (one client for every model-server call). Its `llmBearer` scheme is
 * answered by `src/handlers/llm/llmSecurity.ts`.
 */
export const initLlm: DomainInit = (core) => {
  const { db, now, modelServer, marketplace, config } = core
  return {
    services: {
      llmKeys: new LlmKeys(db, now),
      openAi: new OpenAiProxy({ models: modelServer, marketplace, now }),
      coreAgent: new CoreAgent({ db, marketplace, embedModel: config.modelServer.embedModel, now }),
    },
  }
}

/** The gateway's domains in the order they are built (and started; closed in reverse). */
export const defaultDomains: readonly DomainInit[] = [initShadow, initStorage, initBatch, initLlm]
