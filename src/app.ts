import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import cors from 'cors'
import express, { type Express } from 'express'
import { ipKeyGenerator, rateLimit } from 'express-rate-limit'
import { Counter, Histogram, Registry } from 'prom-client'
import swaggerUi from 'swagger-ui-express'
import { CostQuota } from './auth/CostQuota.js'
import { LoginService } from './auth/LoginService.js'
import { Catalogue } from './catalogue/Catalogue.js'
import type { Env } from './config/env.js'
import type { GatewayConfig } from './config/loadConfig.js'
import { createDatabase, type DatabaseHandle } from './db/createDatabase.js'
import { ArrivalGate } from './gate/ArrivalGate.js'
import { createIpHasher, loadOrCreateSalt } from './gate/createIpHasher.js'
import { PublicSet, publicSetFromDocument, requiresSession } from './gate/PublicSet.js'
import { errorToResult } from './handlers/errorCatalogue.js'
import { domainInits as defaultDomainInits, handlers as defaultHandlers } from './handlers/index.js'
import { sessionTokenOf } from './handlers/core/session.js'
import type { CoreServices, DomainInit, DomainSetup, GatewayLocals, Handler, HandlerContext, Services } from './handlers/types.js'
import { InboundMetrics } from './marketplace/InboundMetrics.js'
import { Marketplace } from './marketplace/Marketplace.js'
import { ModelServerClient } from './marketplace/ModelServerClient.js'
import { SWAGGER_ASSETS, swaggerUiOptions } from './pages/swaggerPage.js'
import {
  createOpenApiRouter,
  type HttpResult,
  loadOpenApiDocument,
  type OpenApiRouter,
  type RequestContext,
  type ResponseValidationReport,
  type UnroutedResult,
} from './shared/http/index.js'
import { createLogger, type Logger } from './shared/logger.js'

/** The repository root (holds `openapi/`), found from this file both under `src/` and `dist/src/`. */
export function findRepoRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start
  for (;;) {
    if (existsSync(join(dir, 'openapi', 'gateway.yaml'))) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error('openapi/gateway.yaml not found above ' + start)
    dir = parent
  }
}

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

const BEARER_SCHEME = 'overlordBearer'

/** Builds the gateway: CORS → rate limit → static public assets → the OpenAPI router (gate, handlers). */
export async function createApp(deps: AppDeps): Promise<GatewayApp> {
  const { config } = deps
  const env = deps.env ?? process.env
  const logger = deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000))
  const root = findRepoRoot()
  const document = loadOpenApiDocument(join(root, 'openapi', 'gateway.yaml'))
  const ownsDatabase = !deps.database
  const database = deps.database ?? (await createDatabase({ url: config.databaseUrl }))

  // ── core services ──
  const catalogue = new Catalogue({ db: database.db, logPath: config.catalogueLogPath, logger, now: deps.now ? () => deps.now!() * 1000 : Date.now })
  const metrics = new Registry()
  const requests = new Counter({ name: 'http_requests_total', help: 'Requests handled, by operation and status.', labelNames: ['operation', 'method', 'status'], registers: [metrics] })
  const durations = new Histogram({ name: 'http_request_duration_seconds', help: 'Request duration by operation.', labelNames: ['operation'], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30], registers: [metrics] })
  const redirects = new Counter({ name: 'gate_redirects_total', help: 'Requests redirected to /login by the arrival gate.', registers: [metrics] })
  const unauthenticated = new Counter({ name: 'gate_auth_required_total', help: 'API requests answered 401 auth_required by the arrival gate.', registers: [metrics] })
  const gate = new ArrivalGate({
    publicSet: new PublicSet(publicSetFromDocument(document)),
    hardGateEnabled: config.hardGateEnabled,
    events: catalogue,
    hashIp: createIpHasher(loadOrCreateSalt(config.ipHashSalt, join(config.dataDir, 'ip-hash-salt'))),
    onRedirect: () => redirects.inc(),
    onEventError: (error) => logger.error({ err: error }, 'auth.gate.redirect event could not be written'),
  })
  const modelServer = new ModelServerClient({ baseUrl: config.modelServer.baseUrl, timeoutMs: config.modelServer.timeoutMs, fetch: deps.fetch })
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
    quota: new CostQuota(database.db, config.quota.costCallsPerDay, now),
    metricsText: () => metrics.metrics(),
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
  })
  services.marketplace = new Marketplace({
    db: database.db,
    modelServer,
    chatModel: config.modelServer.chatModel,
    embedModel: config.modelServer.embedModel,
    now,
    roster: (company) => services.cabinetRoster?.(company) ?? Promise.resolve(undefined),
  })

  // ── domains ──
  const core: CoreServices = { config, db: database.db, dialect: database.dialect, logger, now, catalogue, databaseUrl: config.databaseUrl, env }
  const setups: DomainSetup[] = []
  try {
    for (const init of deps.domains ?? defaultDomainInits) setups.push(await init(core))
  } catch (error) {
    if (ownsDatabase) await database.close()
    throw error
  }
  for (const setup of setups) Object.assign(services, setup.services ?? {})
  for (const { metrics: own } of setups) {
    for (const { name } of own?.getMetricsAsArray() ?? []) metrics.registerMetric(own!.getSingleMetric(name)!)
  }
  Object.assign(services, deps.services ?? {})

  const withServices = (ctx: RequestContext<GatewayLocals>) => Object.assign(ctx, { services }) as HandlerContext
  const domainSecurity: Record<string, (ctx: HandlerContext) => unknown> = {}
  const domainUnauthorized: Record<string, (ctx: HandlerContext) => HttpResult | Promise<HttpResult>> = {}
  for (const setup of setups) {
    Object.assign(domainSecurity, setup.securityHandlers ?? {})
    Object.assign(domainUnauthorized, setup.unauthorized ?? {})
  }

  const gateResult = async (request: { path: string; url: string; headers: RequestContext['headers']; ip: string }): Promise<UnroutedResult> => {
    const denial = await gate.deny(request)
    if (denial.kind === 'redirect') return { status: 302, headers: { Location: denial.location, 'Cache-Control': 'no-store' } }
    unauthenticated.inc()
    return { status: 401, body: denial.body, component: 'AuthRequired' }
  }

  // One session lookup per request, shared by the `sessionToken` and `sessionCookie` security handlers (they run together).
  const sessionLookups = new WeakMap<object, ReturnType<typeof services.login.validate>>()
  const sessionSecurity = async (ctx: RequestContext<GatewayLocals>) => {
    let lookup = sessionLookups.get(ctx.raw)
    if (!lookup) {
      lookup = services.login.validate(sessionTokenOf(ctx))
      sessionLookups.set(ctx.raw, lookup)
    }
    const session = await lookup
    if (session) {
      ctx.locals.session = session
      return session
    }
    if (gate.isOpen(ctx.path, ctx.operation.security)) return { anonymous: true }
    return undefined
  }

  const handlerMap: Record<string, (ctx: RequestContext<GatewayLocals>) => Promise<HttpResult> | HttpResult> = {}
  for (const [operationId, handler] of Object.entries(deps.handlers ?? defaultHandlers)) {
    if (handler) handlerMap[operationId] = (ctx) => handler(withServices(ctx))
  }

  const router = createOpenApiRouter<GatewayLocals>({
    document,
    logger,
    handlers: handlerMap,
    responseValidation: deps.responseValidation ?? config.responseValidation,
    onResponseValidationError: deps.onResponseValidationError,
    securityHandlers: {
      // Rule 3: a valid session proceeds. Rule 6: with the hard gate off, the pre-rollout list proceeds too.
      // `sessionCookie` is the GET/HEAD alternative of the same session (`sessionTokenOf` reads both).
      sessionToken: sessionSecurity,
      sessionCookie: sessionSecurity,
      ...Object.fromEntries(Object.entries(domainSecurity).map(([name, fn]) => [name, (ctx: RequestContext<GatewayLocals>) => fn(withServices(ctx))])),
    },
    unauthorized: async (ctx) => {
      if (requiresSession(ctx.operation.security)) return gateResult(ctx)
      const schemes = ctx.operation.security.flatMap((r) => Object.keys(r))
      for (const scheme of schemes) {
        const custom = domainUnauthorized[scheme]
        if (custom) return custom(withServices(ctx))
      }
      if (schemes.includes(BEARER_SCHEME)) return bearerUnauthorized(ctx, services)
      return { status: 401, body: { error: 'unauthorized', message: 'authentication required' } }
    },
    unrouted: async (request) => {
      const fakeCtx = { headers: request.headers, method: request.method }
      const open = gate.isOpen(request.path, undefined) || (await services.login.validate(sessionTokenOf(fakeCtx))) !== undefined
      if (!open) return gateResult(request)
      return request.reason === 'not_found'
        ? { status: 404, body: { error: 'not_found', message: `no route for ${request.method} ${request.path}` }, component: 'Error' }
        : { status: 405, body: { error: 'method_not_allowed', message: `${request.method} is not allowed on ${request.path}` }, component: 'Error' }
    },
    mapError: (error, ctx) => {
      const mapped = errorToResult(error)
      if (mapped) return mapped
      logger.error({ err: error, operationId: ctx?.operationId }, 'unhandled error')
      return { status: 500, body: { error: 'internal_error', message: 'internal error' } }
    },
    onResponse: (info) => {
      services.inbound.record({ durationMs: info.durationMs, bytesIn: info.requestBytes, bytesOut: info.responseBytes })
      const operation = info.operationId ?? 'unrouted'
      requests.inc({ operation, method: info.method, status: String(info.status) })
      durations.observe({ operation }, info.durationMs / 1000)
      logger.debug({ operation, method: info.method, status: info.status, ms: Math.round(info.durationMs) }, 'request')
    },
  })

  const app = express()
  app.disable('x-powered-by')
  app.set('trust proxy', config.trustProxy)
  // Rule 1: CORS first — a browser preflight is answered here and never reaches the gate.
  app.use(
    cors({
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      credentials: true,
      allowedHeaders: ['Content-Type', 'X-Session-Token', 'Authorization', 'PAYMENT-SIGNATURE', 'X-PAYMENT', 'X-SVC-Tag-App'],
      exposedHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'Retry-After', 'Location'],
      maxAge: 600,
    }),
  )
  // Global per-address rate limit (seed 000 §8), 429 + Retry-After, in the document's `Error` shape.
  app.use(
    rateLimit({
      windowMs: config.rateLimit.windowS * 1000,
      limit: config.rateLimit.max,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      keyGenerator: (req) => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown'),
      handler: (req, res, _next, options) => {
        const retryAfter = Math.max(1, Math.ceil(options.windowMs / 1000))
        const operation = router.matchOperation(req.method, req.path)
        void router.send(
          req,
          res,
          {
            status: 429,
            headers: { 'Retry-After': String(Number(res.getHeader('Retry-After')) || retryAfter) },
            body: { error: 'rate_limited', message: `too many requests; retry after ${Number(res.getHeader('Retry-After')) || retryAfter} s`, details: { retry_after_s: Number(res.getHeader('Retry-After')) || retryAfter } },
            component: 'Error',
          },
          operation,
        )
      },
    }),
  )
  // Public static prefixes (x-public-prefixes): swagger-ui assets and the API documents themselves.
  app.use(SWAGGER_ASSETS, swaggerUi.serveFiles(undefined, swaggerUiOptions as never))
  app.use('/doc/openapi', express.static(join(root, 'openapi'), { index: false, fallthrough: true }))
  app.use('/doc/asyncapi', express.static(join(root, 'asyncapi'), { index: false, fallthrough: true }))
  app.use(router.handler)

  return {
    app,
    services,
    router,
    start: async () => {
      // The log is the record: index anything the database is missing (in the background).
      void catalogue
        .reindex()
        .then((added) => added > 0 && logger.warn({ added }, 'catalogue: re-indexed events missing from the database'))
        .catch((error: unknown) => logger.error({ err: error }, 'catalogue re-index failed'))
      for (const setup of setups) await setup.start?.()
    },
    close: async () => {
      for (const setup of [...setups].reverse()) {
        try {
          await setup.close?.()
        } catch (error) {
          logger.error({ err: error }, 'domain close failed')
        }
      }
      if (ownsDatabase) await database.close()
    },
  }
}

/** Default 401 of the shadow tier's bearer scheme (`BearerUnauthorized` of the document). */
async function bearerUnauthorized(ctx: RequestContext<GatewayLocals>, services: Services): Promise<HttpResult> {
  const authorization = ctx.headers.authorization
  if (authorization && /^bearer\s+\S/i.test(authorization))
    return { status: 401, body: { error: 'bearer_invalid', message: 'bearer token invalid or expired' } }
  const session = await services.login.validate(sessionTokenOf(ctx))
  if (session)
    return { status: 401, body: { error: 'insufficient_privilege', message: 'a session token does not authorise shadow-overlord operations' } }
  return { status: 401, body: { error: 'bearer_required', message: 'Authorization: Bearer <jwt> required' } }
}
