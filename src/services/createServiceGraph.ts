import { chainSignatureVerifier } from '../auth/chainSignatureVerifier.js'
import { join } from 'node:path'
import { CostQuota } from '../auth/CostQuota.js'
import { LoginService } from '../auth/LoginService.js'
import { Catalogue } from '../catalogue/Catalogue.js'
import { CostPayments } from '../cost/CostPayments.js'
import { LlmMetrics } from '../cost/LlmMetrics.js'
import { UsageLedger } from '../cost/UsageLedger.js'
import { InstanceRegistry } from '../cluster/InstanceRegistry.js'
import { resolveInstanceId } from '../cluster/resolveInstanceId.js'
import type { Env } from '../config/env.js'
import type { GatewayConfig } from '../config/loadConfig.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { createIpHasher, loadOrCreateSalt } from '../gate/createIpHasher.js'
import { PublicSet, publicSetFromDocument } from '../gate/PublicSet.js'
import type { CoreServices, DomainInit, DomainSetup, Services } from '../handlers/types.js'
import { InboundMetrics } from '../marketplace/InboundMetrics.js'
import { Marketplace } from '../marketplace/Marketplace.js'
import { ModelServerPool } from '../llm/ModelServerPool.js'
import { GatewayMetrics } from '../pipeline/GatewayMetrics.js'
import type { Logger } from '../shared/logger.js'
import { readX402Config } from '../x402/config.js'
import { createAlgodClient } from '../x402/createAlgodClient.js'
import { createRailRegistry } from '../x402/RailRegistry.js'

export type ServiceGraphParameters = {
  config: GatewayConfig
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
  /** Domain start hooks, run in this order. */
  domains: readonly DomainInit[]
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
  /** Stops background work (domains in reverse order) and closes the database when the graph opened it. */
  close: () => Promise<void>
}

/**
 * The gateway's service graph, built in one place and apart from the HTTP wiring: database, catalogue,
 * metrics, arrival gate, model-server client, login, quota, marketplace, then each domain's init (explicit,
 * in the order given) adds its services.
 */
export async function createServiceGraph(p: ServiceGraphParameters): Promise<ServiceGraph> {
  const { config, logger, now } = p
  const x402 = readX402Config(p.env) // before the database opens: a bad setting leaks nothing
  // the payment rails, registered once: paid storage, cost calls, discovery and the pages ask them
  const rails = createRailRegistry(x402, createAlgodClient(x402.algodUrl, x402.algodToken))
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
  // One model server or several (routed by model, least busy first, failing over before the first byte).
  const modelServer = new ModelServerPool({
    baseUrls: config.modelServer.baseUrls,
    timeoutMs: config.modelServer.timeoutMs,
    refreshMs: config.modelServer.refreshMs,
    fetch: p.fetch,
  })
  metrics.adopt(modelServer.registry)
  // Sessions and the agent registry are cached while the database reports every change to them (issue 17).
  const changeFeed = config.cache.enabled ? database.changeFeed : undefined
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
    quota: new CostQuota(database.db, config.quota.costCallsPerDay, now),
    // Paying past the quota uses the rails of paid storage (`SERVICE_X402__*`, `FACILITATOR_TOKEN`).
    rails,
    costPayments: new CostPayments({
      db: database.db,
      x402,
      rails,
      priceAtomic: config.quota.pricePerCallAtomic,
      publicOrigin: config.publicOrigin,
      events: catalogue,
      logger,
      now,
    }),
    usage: new UsageLedger(database.db, now),
    llmMetrics: new LlmMetrics([config.modelServer.chatModel, config.modelServer.embedModel]),
    metricsText: () => metrics.text(),
  } as Services
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
    verifySignature: config.login.rpcUrl ? chainSignatureVerifier(config.login.rpcUrl) : undefined,
    changeFeed,
    onCacheEvent: metrics.cacheEventRecorder('session'),
  })
  services.marketplace = new Marketplace({
    db: database.db,
    modelServer,
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
  const core: CoreServices = { config, db: database.db, dialect: database.dialect, logger, now, catalogue, instance, rails, databaseUrl: config.databaseUrl, env: p.env }
  const setups: DomainSetup[] = []
  const { login, marketplace } = services // the instances that subscribed (overrides may replace them)
  const closeCaches = () => {
    login.close()
    marketplace.close()
    unlogFeed?.()
  }
  try {
    for (const init of p.domains) setups.push(await init(core))
  } catch (error) {
    closeCaches()
    if (ownsDatabase) await database.close()
    throw error
  }
  for (const setup of setups) Object.assign(services, setup.services ?? {})
  metrics.adopt(services.llmMetrics.registry)
  for (const setup of setups) if (setup.metrics) metrics.adopt(setup.metrics)
  Object.assign(services, p.overrides ?? {})

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
      for (const setup of setups) await setup.start?.()
    },
    close: async () => {
      modelServer.stop()
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
