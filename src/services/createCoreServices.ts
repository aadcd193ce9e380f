import { join } from 'node:path'
import { Catalogue } from '../catalogue/Catalogue.js'
import { InstanceRegistry } from '../cluster/InstanceRegistry.js'
import { resolveInstanceId } from '../cluster/resolveInstanceId.js'
import type { Env } from '../config/env.js'
import type { GatewayConfig } from '../config/loadConfig.js'
import { ModelServers } from '../cost/meter/index.js'
import type { DatabaseHandle } from '../db/createDatabase.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { createIpHasher, loadOrCreateSalt } from '../gate/createIpHasher.js'
import { PublicSet, publicSetFromDocument } from '../gate/PublicSet.js'
import { Readiness } from '../health/Readiness.js'
import { InboundMetrics } from '../marketplace/InboundMetrics.js'
import { readMcpConfig } from '../mcp/config.js'
import { loadMcpToolCatalog } from '../mcp/toolCatalog.js'
import type { Logger } from '../shared/logger.js'
import { GatewayMetrics } from './GatewayMetrics.js'
import { MetricsAccess } from './MetricsAccess.js'
import { createPaymentRails } from './createPaymentRails.js'
import type { RailPlugin } from '../x402/RailRegistry.js'

/** What the core services are built from. */
export type CoreInputs = {
  config: GatewayConfig
  /** Payment rails registered after the configured ones. */
  railPlugins?: readonly RailPlugin[] | undefined
  env: Env
  document: Record<string, unknown>
  logger: Logger
  /** Epoch seconds. */
  now: () => number
  clockOverridden: boolean
  fetch?: typeof fetch | undefined
}

/** The settings read before the database opens: a bad one stops the start and leaks nothing. */
export function readCoreSettings(p: Pick<CoreInputs, 'env' | 'document' | 'railPlugins'>) {
  const { x402, rails } = createPaymentRails(p.env, p.railPlugins)
  // the MCP tools' schemas are the document's components, inlined once here
  const mcp = { catalog: loadMcpToolCatalog(p.document), config: readMcpConfig(p.env) }
  return { x402, rails, mcp }
}

export type CoreSettings = ReturnType<typeof readCoreSettings>

/**
 * The services every domain may use, over an open database: the catalogue, the gateway's metrics, the arrival
 * gate, this instance's registration, the model-server client, readiness and the MCP settings.
 */
export function createCoreServices(p: CoreInputs, settings: CoreSettings, database: DatabaseHandle) {
  const { config, logger, now } = p
  const catalogue = new Catalogue({ db: database.db, logPath: config.catalogueLogPath, logger, now: p.clockOverridden ? () => now() * 1000 : Date.now, commit: database.backgroundCommit })
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
  // makes them generate goes through the meter (./createCostServices.ts).
  const modelServer = new ModelServers({
    baseUrls: config.modelServer.baseUrls,
    timeoutMs: config.modelServer.timeoutMs,
    refreshMs: config.modelServer.refreshMs,
    apiKey: config.modelServer.apiKey,
    fetch: p.fetch,
  })
  metrics.adopt(modelServer.registry)
  return {
    metrics,
    services: {
      config,
      db: database.db,
      dialect: database.dialect,
      logger,
      now,
      catalogue,
      gate,
      instance,
      modelServer,
      rails: settings.rails,
      inbound: new InboundMetrics(60),
      readiness: new Readiness(),
      metricsText: () => metrics.text(),
      metricsAccess: new MetricsAccess(config.metricsToken),
      mcp: settings.mcp,
    },
  }
}

export type CoreGraph = ReturnType<typeof createCoreServices>
