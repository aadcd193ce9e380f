/**
 * The gateway's HTTP pipeline, in the seed's order (000 §4.1–4.2):
 *
 *   CORS → rate limit → gate → route → security → validation → handler → response validation
 *
 * One stage per module in `src/pipeline/`; the services every stage and handler uses are built apart, in
 * `src/services/createServiceGraph.ts`. Route, validation and response validation are the OpenAPI router's
 * (`src/shared/http/`): it matches the operation, asks the security stage, validates the request, calls the
 * handler and validates the response against the document before sending it.
 */
import { join } from 'node:path'
import express, { type Express } from 'express'
import type { Env } from './config/env.js'
import { findRepoRoot } from './config/findRepoRoot.js'
import type { GatewayConfig } from './config/loadConfig.js'
import type { DatabaseHandle } from './db/createDatabase.js'
import { domainInits as defaultDomainInits, handlers as defaultHandlers } from './handlers/index.js'
import type { DomainInit, GatewayLocals, Handler, Services } from './handlers/types.js'
import { composeStages } from './pipeline/composeStages.js'
import { corsStage } from './pipeline/corsStage.js'
import { errorStage } from './pipeline/errorStage.js'
import { gateStage } from './pipeline/gateStage.js'
import { handlerStage } from './pipeline/handlerStage.js'
import { publicAssets } from './pipeline/publicAssets.js'
import { DatabaseRateLimitStore } from './pipeline/DatabaseRateLimitStore.js'
import { rateLimitStage } from './pipeline/rateLimitStage.js'
import { securityStage } from './pipeline/securityStage.js'
import { createServiceGraph } from './services/createServiceGraph.js'
import { mountPipeline } from './shared/http/mountPipeline.js'
import { createOpenApiRouter, loadOpenApiDocument, type OpenApiRouter, type ResponseValidationReport } from './shared/http/index.js'
import { createLogger, type Logger } from './shared/logger.js'

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
  /** Domain start hooks (default: `src/handlers/index.ts`). */
  domains?: DomainInit[]
  /** Handler map (default: `src/handlers/index.ts`). */
  handlers?: Partial<Record<string, Handler>>
  /** Replace services after they are built (tests). */
  services?: Partial<Services>
}

export type GatewayApp = {
  app: Express
  services: Services
  router: OpenApiRouter
  /** Starts the domains' background work. */
  start: () => Promise<void>
  /** Stops background work and closes the database (when the app opened it). */
  close: () => Promise<void>
}

/** Builds the gateway: the service graph, then the HTTP pipeline over it. */
export async function createApp(deps: AppDeps): Promise<GatewayApp> {
  const { config } = deps
  const logger = deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })
  const root = findRepoRoot()
  const document = loadOpenApiDocument(join(root, 'openapi', 'gateway.yaml'))
  const graph = await createServiceGraph({
    config,
    env: deps.env ?? process.env,
    document,
    logger,
    now: deps.now ?? (() => Math.floor(Date.now() / 1000)),
    clockOverridden: deps.now !== undefined,
    database: deps.database,
    fetch: deps.fetch,
    domains: deps.domains ?? defaultDomainInits,
    overrides: deps.services,
  })
  const { services, metrics } = graph

  const gate = gateStage({ gate: services.gate, validateSession: (token) => services.login.validate(token), onAuthRequired: () => metrics.gateAuthRequired() })
  const security = securityStage({ services, gate: services.gate, gateStage: gate, setups: graph.setups })
  const mapError = errorStage(logger)
  const router = createOpenApiRouter<GatewayLocals>({
    document,
    logger,
    unrouted: gate.unrouted, //                                      3. gate (paths without an operation)
    securityHandlers: security.handlers, //                          4–5. route, then security (gate for session operations)
    unauthorized: security.unauthorized,
    //                                                                6. validation: the router, against the document
    handlers: handlerStage(deps.handlers ?? defaultHandlers, services), // 7. handler
    mapError,
    responseValidation: deps.responseValidation ?? config.responseValidation, // 8. response validation
    onResponseValidationError: deps.onResponseValidationError,
    onResponse: (info) => {
      services.inbound.record({ durationMs: info.durationMs, bytesIn: info.requestBytes, bytesOut: info.responseBytes })
      metrics.recordResponse(info)
      logger.debug({ operation: info.operationId ?? 'unrouted', method: info.method, status: info.status, ms: Math.round(info.durationMs) }, 'request')
    },
  })

  const app = express()
  app.disable('x-powered-by')
  app.set('trust proxy', config.trustProxy)
  // 2. rate limit: counters in this process, or in the database when several instances share it
  const rateLimitStore = config.rateLimit.store === 'database' ? new DatabaseRateLimitStore(services.db) : undefined
  mountPipeline(
    app,
    composeStages(
      corsStage({ origins: config.corsOrigins }), // 1. CORS
      rateLimitStage({ windowS: config.rateLimit.windowS, max: config.rateLimit.max, store: rateLimitStore, send: router.send, matchOperation: router.matchOperation }), // 2. rate limit
      publicAssets(root), // public static prefixes (x-public-prefixes): no gate, files only
      router.handler, // 3–8. gate → route → security → validation → handler → response validation
    ),
    {
      // A stage that failed (the rate limit's shared store, say): the catalogue's answer, never Express's HTML page.
      fallback: (req, res, error) => {
        if (res.headersSent) return void res.destroy()
        void router.send(req, res, error === undefined ? { status: 404, body: { error: 'not_found', message: `No route for ${req.method} ${req.path}.` } } : mapError(error, undefined))
      },
    },
  )

  return { app, services, router, start: graph.start, close: graph.close }
}
