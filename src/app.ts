/**
 * The gateway's HTTP pipeline, in the seed's order (000 §4.1–4.2), listed once in `createApp`:
 *
 *   CORS → rate limit → gate → route → security → validation → handler → respond, on-error, on-response
 *
 * With traces on (`SERVICE_TRACING__ENABLED`), a tracing stage comes first: the request's span, in which every
 * stage runs and every outgoing call is a child (`src/shared/tracing/`).
 *
 * One stage per module: the gateway's own in `src/pipeline/` (CORS, rate limit, gate, the security
 * schemes, the handler map, the error catalogue), the OpenAPI ones in `src/shared/http/` (route, security
 * requirements, validation, handler call, response validation), shared with the model server. The services
 * every stage and handler uses are built apart, in `src/services/createServiceGraph.ts`.
 */
import type { RailPlugin } from './x402/RailRegistry.js'
import { lookupSession } from './handlers/core/session.js'
import { join } from 'node:path'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import type { Express } from 'express'
import type { Env } from './config/env.js'
import { findRepoRoot } from './config/findRepoRoot.js'
import type { GatewayConfig } from './config/loadConfig.js'
import type { DatabaseHandle } from './db/createDatabase.js'
import { catalogueOf, declaredStatuses, domainPlugins, handlersOf, mcpToolsOf, resolvePlugins } from './handlers/plugins.js'
import type { GatewayLocals, Handler, Services } from './handlers/types.js'
import type { DomainEntry } from './services/DomainPlugin.js'
import { corsStage } from './pipeline/corsStage.js'
import { errorStage } from './pipeline/errorStage.js'
import { gateStage } from './pipeline/gateStage.js'
import { handlerStage } from './pipeline/handlerStage.js'
import { publicAssets } from './pipeline/publicAssets.js'
import { DatabaseRateLimitStore } from './pipeline/DatabaseRateLimitStore.js'
import { FallbackRateLimitStore } from './pipeline/FallbackRateLimitStore.js'
import { MemoryRateLimitStore, type RateLimitStore } from './pipeline/MemoryRateLimitStore.js'
import { RedisRateLimitStore } from './pipeline/RedisRateLimitStore.js'
import { createRateLimiter, isHealthProbe, rateLimitStage } from './pipeline/rateLimitStage.js'
import { securityStage } from './pipeline/securityStage.js'
import { createServiceGraph } from './services/createServiceGraph.js'
import { createPipelineApp } from './shared/http/createPipelineApp.js'
import {
  createOpenApiRouter,
  loadOpenApiDocument,
  middleware,
  NoOperationError,
  onError,
  onResponse,
  type OpenApiRouter,
  type ResponseInfo,
  type ResponseValidationReport,
  step,
} from './shared/http/index.js'
import { createLogger, type Logger } from './shared/logger.js'
import { serverSpanStage } from './shared/tracing/serverSpanStage.js'
import { startTracing } from './shared/tracing/startTracing.js'

export { findRepoRoot }

export type AppDeps = {
  config: GatewayConfig
  /** Environment other domains read their sections from (default `process.env`). */
  env?: Env
  /** An open database; default: opened (and migrated) from `config.databaseUrl`, closed by `close()`. */
  database?: DatabaseHandle
  logger?: Logger
  /** Epoch seconds. */
  now?: () => number
  /** `fetch` used for the model server (tests). */
  fetch?: typeof fetch
  /** Overrides `config.responseValidation` (tests use `error`). */
  responseValidation?: 'off' | 'warn' | 'error'
  onResponseValidationError?: (report: ResponseValidationReport) => void
  /** The domain plug-ins (or their `init…` start hooks) to build (default: all, `src/handlers/plugins.ts`). */
  domains?: readonly DomainEntry[]
  /** Handler map (default: the core's and the built plug-ins'; a plug-in not built answers its refusal). */
  handlers?: Partial<Record<string, Handler>>
  /** Replace services after they are built (tests). */
  services?: Partial<Services>
  /** Payment rails registered after the configured ones, each one call (a deployment's own rail, a test's). */
  railPlugins?: readonly RailPlugin[]
  /** With `config.tracing.enabled`: where spans go instead of the OTLP endpoint (tests: an in-memory exporter). */
  spanExporter?: SpanExporter
}

export type GatewayApp = {
  app: Express
  services: Services
  router: OpenApiRouter
  /** Starts the domains' background work. */
  start: () => Promise<void>
  /** The stop signal: `GET /health/ready` answers 503 at once; no new background work is taken (requests go on). */
  drain: () => Promise<void>
  /** Stops background work, hands this instance's work over, closes the database (when the app opened it). */
  close: () => Promise<void>
}

/** Builds the gateway: the service graph, then the HTTP pipeline over it. */
export async function createApp(deps: AppDeps): Promise<GatewayApp> {
  const { config } = deps
  const logger = deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })
  const root = findRepoRoot()
  const document = loadOpenApiDocument(join(root, 'openapi', 'gateway.yaml'))
  const plugins = resolvePlugins(deps.domains ?? domainPlugins)
  const graph = await createServiceGraph({
    config,
    env: deps.env ?? process.env,
    document,
    logger,
    now: deps.now ?? (() => Math.floor(Date.now() / 1000)),
    clockOverridden: deps.now !== undefined,
    database: deps.database,
    fetch: deps.fetch,
    domains: plugins,
    overrides: deps.services,
    railPlugins: deps.railPlugins,
  })
  const { services, metrics } = graph

  services.errors = catalogueOf(plugins)
  // what `/mcp` serves and `/.well-known/x402` announces: the built plug-ins' tools
  const toolContributors = mcpToolsOf(plugins)
  services.mcp = { ...services.mcp, served: (ctx) => toolContributors.flatMap((toolsOf) => toolsOf(ctx)) }
  const gate = gateStage({ gate: services.gate, validateSession: (request) => lookupSession(services, request) ?? Promise.resolve(undefined), onAuthRequired: () => metrics.gateAuthRequired() })
  const security = securityStage({ services, gate: services.gate, gateStage: gate, setups: graph.setups })
  // The OpenAPI document's stages (route, security, validation, handler) and what answers every response
  // (response validation against the document, errors through the catalogue).
  const router = createOpenApiRouter<GatewayLocals>({
    document,
    logger,
    securityHandlers: security.handlers,
    unauthorized: security.unauthorized,
    failsRequest: security.failsRequest,
    handlers: handlerStage(deps.handlers ?? handlersOf(plugins, declaredStatuses(document)), services),
    responseValidation: deps.responseValidation ?? config.responseValidation,
    onResponseValidationError: deps.onResponseValidationError,
  })
  // Every refusal through the catalogue, in the shape its route declares (OpenAI's, Anthropic's on their routes).
  const mapError = errorStage<GatewayLocals>(logger, services.errors, { routeOf: router.routeOf, operations: router.operations })
  const recordResponse = (info: ResponseInfo) => {
    services.inbound.record({ durationMs: info.durationMs, bytesIn: info.requestBytes, bytesOut: info.responseBytes })
    metrics.recordResponse(info)
    logger.debug({ operation: info.operationId ?? 'unrouted', method: info.method, status: info.status, ms: Math.round(info.durationMs) }, 'request')
  }
  // Rate limit counters in this process, or shared by every replica: in Redis (the database when Redis cannot
  // count a hit) or in the database.
  const { store: sharedRateLimitStore, close: closeRateLimitStore } = await createRateLimitStore(config, services.db, logger)
  const rateLimitStore = sharedRateLimitStore ?? new MemoryRateLimitStore()
  // what one request carries several of (the tool calls of one `/mcp` request) counts against the same limit
  services.rateLimit = createRateLimiter({ windowS: config.rateLimit.windowS, max: config.rateLimit.max, store: rateLimitStore })
  // Traces (off by default): one span per request, named by the route it took; off, no stage at all.
  const tracing = await startTracing(config.tracing, { exporter: deps.spanExporter, logger })
  const tracingStages = tracing.enabled ? [middleware<GatewayLocals>('tracing', serverSpanStage({ tracer: tracing.tracer, routeOf: router.matchOperation }))] : []

  const app = createPipelineApp(
    router.pipeline(
      ...tracingStages, //                                  0. tracing (when on): the request's span, in the caller's trace
      middleware('cors', corsStage({ origins: config.corsOrigins })), // 1. CORS (a preflight ends here)
      middleware('rate limit', rateLimitStage({ windowS: config.rateLimit.windowS, max: config.rateLimit.max, store: rateLimitStore, exempt: isHealthProbe })), // 2. rate limit (its 429 through on-error; not the health probes)
      middleware('public assets', publicAssets(root)), //   public static prefixes (x-public-prefixes): no gate, files only
      step('gate', gate.stage(router.routeOf)), //          3. a closed path needs a live session
      step('route', router.stages.route), //                4. the operation, its parameters, the context (404/405)
      step('security', router.stages.security), //          5. the operation's requirements (securityStage)
      step('validation', router.stages.validation), //      6. the body read, the request against the document
      step('handler', router.stages.handler), //            7. the operation's handler (handlerStage)
      router.stages.respond, //                             8. respond: every answer validated against the document, sent
      onError('on-error', mapError), //                     9. on-error: every refusal through the catalogue, in its route's shape (errorStage)
      onResponse('on-response', recordResponse), //         10. on-response: inbound traffic, metrics, access log
    ),
    {
      configure: (settings) => {
        settings.disable('x-powered-by')
        settings.set('trust proxy', config.trustProxy)
      },
      // What the list itself could not answer (its respond failed): the catalogue's answer, never Express's HTML page.
      fallback: (req, res, error) => {
        if (res.headersSent) return void res.destroy()
        void router.send(req, res, mapError(error ?? new NoOperationError(req.method, req.path), undefined))
      },
    },
  )

  return {
    app,
    services,
    router,
    start: graph.start,
    drain: graph.drain,
    close: async () => {
      await closeRateLimitStore()
      await graph.close()
      await tracing.close()
    },
  }
}

/** The store `SERVICE_RATE_LIMIT__STORE` names (undefined: this process's memory) and how to close it. */
async function createRateLimitStore(config: GatewayConfig, db: Services['db'], logger: Logger): Promise<{ store: RateLimitStore | undefined; close: () => Promise<void> }> {
  const { store, redis } = config.rateLimit
  if (store === 'database') return { store: new DatabaseRateLimitStore(db), close: async () => undefined }
  if (store !== 'redis' || !redis) return { store: undefined, close: async () => undefined }
  let lastErrorLog = 0
  const primary = new RedisRateLimitStore({
    url: redis.url,
    prefix: redis.prefix,
    commandTimeoutMs: redis.timeoutMs,
    // the client reconnects every ≤ 2 s while Redis is down: one line a minute is enough
    onError: (error) => {
      if (Date.now() - lastErrorLog < 60_000) return
      lastErrorLog = Date.now()
      logger.warn({ err: error.message }, 'rate limit: Redis connection error')
    },
  })
  const connected = await primary.ready(2_000)
  if (!connected) logger.warn('rate limit: Redis not reachable at start; counting in the database until it is')
  const shared = new FallbackRateLimitStore(primary, new DatabaseRateLimitStore(db), ({ fallback, error }) => {
    if (fallback) logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'rate limit: Redis failed; counting in the database')
    else logger.info('rate limit: Redis is back; counting in Redis')
  })
  return { store: shared, close: () => primary.close() }
}
