import type { Env } from '../config/env.js'
import type { GatewayConfig } from '../config/loadConfig.js'
import type { Logger } from '../shared/logger.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { CapabilityMonitor } from '../health/CapabilityMonitor.js'
import { createCoreServices, readCoreSettings, type CoreGraph, type CoreInputs } from './createCoreServices.js'
import { createCostServices, readCostSettings } from './createCostServices.js'
import { createSessionServices } from './createSessionServices.js'
import { isEarly, toPlugin, type DomainEntry, type DomainPlugin, type DomainSecurity } from './DomainPlugin.js'
import { batchDomain } from './domains/batchDomain.js'
import { llmDomain } from './domains/llmDomain.js'
import { shadowDomain } from './domains/shadowDomain.js'
import { storageDomain } from './domains/storageDomain.js'
import type { GatewayMetrics } from './GatewayMetrics.js'
import { readinessCapabilities } from './readinessCapabilities.js'
import type { RailPlugin } from '../x402/RailRegistry.js'
import type { DomainSetup, EarlyCoreServices, Services } from './types.js'

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
   * The domain plug-ins, built in this order (default: `defaultDomains`: shadow, storage, batch, /llm, without
   * the HTTP security schemes; `createApp` passes `src/handlers/plugins.ts`'s list, which adds them).
   */
  domains?: readonly DomainEntry[] | undefined
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
 * The gateway's service graph, built in one place and apart from the HTTP wiring: the core services
 * (./createCoreServices.ts), cost calls (./createCostServices.ts), sessions and the agent registry
 * (./createSessionServices.ts), then each domain plug-in of the list, in its order (./domains/). Every service
 * is built here once, eagerly: no domain builds another lazily behind a module-level map.
 */
export async function createServiceGraph(p: ServiceGraphParameters): Promise<ServiceGraph> {
  const settings = { ...readCoreSettings(p), cost: readCostSettings(p.env) } // before the database opens: a bad setting leaks nothing
  const ownsDatabase = !p.database
  const database =
    p.database ??
    (await createDatabase({
      url: p.config.databaseUrl,
      sqliteSynchronous: p.config.sqliteSynchronous,
      onConnectionLost: (error) => p.logger.warn({ err: error }, 'a database connection was lost; the pool opens another when needed'),
    }))
  const core = createCoreServices(p, settings, database)
  const cost = createCostServices(p, settings, database, core.services)
  const plugins = (p.domains ?? defaultDomains).map(toPlugin)
  const closeDatabase = async () => {
    if (ownsDatabase) await database.close()
  }
  // Dependency order: the domains the sessions and the agent registry read (the shadow tier), then those two,
  // then the domains that may use the marketplace. Each receives services already built; none is bound later.
  const early = await buildDomains(plugins.filter(isEarly), earlyCore(p, core.services, database)).catch(rethrowAfter(closeDatabase))
  const earlyServices = merged(early)
  const sessions = createSessionServices(p, database, core.metrics, core.services.catalogue, cost.loginVerifier, earlyServices)
  await sessions.ready()
  const closeCore = async () => {
    sessions.close()
    await closeDatabase()
  }
  const late = await buildDomains(plugins.filter((plugin) => !isEarly(plugin)), { ...earlyCore(p, core.services, database), marketplace: sessions.services.marketplace }).catch(rethrowAfter(closeCore))
  const setups = [...early, ...late]
  // Services not built (a domain left out of the list) are absent; so are their handlers (src/handlers/plugins.ts).
  const domainServices = { ...earlyServices, ...merged(late) } as DomainServices
  const services: Services = { ...core.services, ...cost.services, ...sessions.services, ...domainServices, ...p.overrides }
  core.metrics.adopt(services.llmMetrics.registry)
  for (const setup of setups) if (setup.metrics) core.metrics.adopt(setup.metrics)
  // What `GET /health/ready` waits for besides the replica's own phase: each configured capability, checked in the background.
  const capabilities = new CapabilityMonitor({
    capabilities: readinessCapabilities(services, p.env, p.config.health.checkTimeoutMs),
    intervalMs: p.config.health.checkIntervalMs,
    timeoutMs: p.config.health.checkTimeoutMs,
    onChange: (capability, state, previous) => {
      if (state.status === 'up') p.logger.info({ capability, previous }, `${capability} is up`)
      else p.logger.warn({ capability, status: state.status, detail: state.detail }, `${capability} is ${state.status}: GET /health/ready answers 503 until it is back`)
    },
  })
  services.readiness.watch(capabilities)
  return { services, metrics: core.metrics, setups, ...graphLifecycle(services, setups, capabilities, closeCore) }
}

/** What the core, cost calls and sessions build: every service of `Services` that is not a domain's. */
type BuiltByCore = CoreGraph['services'] & ReturnType<typeof createCostServices>['services'] & ReturnType<typeof createSessionServices>['services']

/**
 * The services of the domain plug-ins, as handlers see them: the one narrowing of the graph. A list without some
 * domain builds no services of it and installs none of its handlers (src/handlers/plugins.ts), so no handler
 * reads what is absent.
 */
type DomainServices = Omit<Services, keyof BuiltByCore>

/** What every domain plug-in receives (the later ones also the marketplace). */
function earlyCore(p: CoreInputs, core: CoreGraph['services'], database: DatabaseHandle): EarlyCoreServices {
  const { config, db, dialect, logger, now, catalogue, instance, modelServer, rails } = core
  // the change feed is not gated by the cache setting: the admin tier's exported files and unlock propagation follow it
  return { config, db, dialect, logger, now, catalogue, instance, modelServer, rails, databaseUrl: config.databaseUrl, env: p.env, changeFeed: database.changeFeed, backgroundCommit: database.backgroundCommit }
}

/** Builds plug-ins in the list's order, each from the core services; a plug-in's security schemes join its setup. */
async function buildDomains<Core>(plugins: readonly { create: (core: Core) => DomainSetup | Promise<DomainSetup>; security?: DomainSecurity | undefined }[], core: Core): Promise<DomainSetup[]> {
  const setups: DomainSetup[] = []
  for (const plugin of plugins) setups.push({ ...(await plugin.create(core)), ...plugin.security })
  return setups
}

/** The services of several domains in one object (a later one's win). */
function merged(setups: readonly DomainSetup[]): Partial<Services> {
  return Object.assign({}, ...setups.map((setup) => setup.services ?? {}))
}

/** Runs `cleanup`, then throws `error` again (a domain that failed to build leaves no open database behind). */
function rethrowAfter(cleanup: () => Promise<void>) {
  return async (error: unknown): Promise<never> => {
    await cleanup()
    throw error
  }
}

/**
 * Start, drain and close of the graph: the core's background work around the domains' (started in order,
 * drained and closed in reverse).
 */
function graphLifecycle(services: Services, setups: readonly DomainSetup[], capabilities: CapabilityMonitor, closeDatabase: () => Promise<void>) {
  const { logger, catalogue, instance, modelServer, costPayments, batchSettlement, readiness } = services
  const eachInReverse = async (step: 'drain' | 'close') => {
    for (const setup of [...setups].reverse()) {
      try {
        await setup[step]?.()
      } catch (error) {
        logger.error({ err: error }, `domain ${step} failed`)
      }
    }
  }
  return {
    start: async () => {
      // The log is the record: index anything the database is missing (in the background).
      void catalogue
        .reindex()
        .then((added) => added > 0 && logger.warn({ added }, 'catalogue: re-indexed events missing from the database'))
        .catch((error: unknown) => logger.error({ err: error }, 'catalogue re-index failed'))
      // Registered before any domain starts: their background work is done in this instance's name.
      await instance.start()
      modelServer.start()
      costPayments.startReconciling()
      for (const setup of setups) await setup.start?.()
      capabilities.start()
      batchSettlement?.claims.start()
      readiness.started()
    },
    drain: async () => {
      readiness.drain()
      await eachInReverse('drain')
    },
    close: async () => {
      readiness.drain()
      capabilities.stop()
      modelServer.stop()
      costPayments.stopReconciling()
      await batchSettlement?.claims.stop().catch((error: unknown) => logger.error({ err: error }, 'batch-settlement claim job stop failed'))
      // paid storage hands what this instance still holds back to the queue, for a peer to take at once
      await eachInReverse('close')
      await instance.stop().catch((error: unknown) => logger.error({ err: error }, 'instance stop failed'))
      await closeDatabase()
    },
  }
}

/** The gateway's domains in the order they are built (and started; closed in reverse), without HTTP security schemes. */
export const defaultDomains: readonly DomainPlugin[] = [shadowDomain, storageDomain, batchDomain, llmDomain]
