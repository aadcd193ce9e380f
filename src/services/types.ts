import type { SignInWithX } from '../auth/SignInWithX.js'
import type { BatchSettlement } from '../x402/batch/BatchSettlement.js'
import type { Kysely } from 'kysely'
import type { ChangeFeed } from '../cache/ChangeFeed.js'
import type { BackgroundCommit } from '../db/createBackgroundCommit.js'
import type { Registry } from 'prom-client'
import type { CostQuota } from '../auth/CostQuota.js'
import type { InstanceRegistry } from '../cluster/InstanceRegistry.js'
import type { LoginService, ValidSession } from '../auth/LoginService.js'
import type { Catalogue } from '../catalogue/Catalogue.js'
import type { CostPayments } from '../cost/CostPayments.js'
import type { LlmMetrics } from '../cost/LlmMetrics.js'
import type { UsageLedger } from '../cost/UsageLedger.js'
import type { GatewayConfig } from '../config/loadConfig.js'
import type { Database } from '../db/Database.js'
import type { ExtraChecks } from '../health/checkHealth.js'
import type { Readiness } from '../health/Readiness.js'
import type { DatabaseDialect } from '../db/createDatabase.js'
import type { ArrivalGate } from '../gate/ArrivalGate.js'
import type { InboundMetrics } from '../marketplace/InboundMetrics.js'
import type { Marketplace } from '../marketplace/Marketplace.js'
import type { Meter, ModelServers } from '../cost/meter/index.js'
import type { Logger } from '../shared/logger.js'
import type { ShadowTier } from '../shadow/createShadowTier.js'
import type { StorageService } from '../storage/StorageService.js'
import type { LlmKeys } from '../llm/LlmKeys.js'
import type { McpConfig } from '../mcp/config.js'
import type { McpToolSpec } from '../mcp/toolCatalog.js'
import type { McpTool } from '../mcp/McpTools.js'
import type { CoreAgent } from '../llm/CoreAgent.js'
import type { OpenAiProxy } from '../llm/OpenAiProxy.js'
import type { BatchService } from './createBatchService.js'
import type { HttpResult, RequestContext, UnroutedResult } from '../shared/http/index.js'
import type { RailRegistry } from '../x402/RailRegistry.js'
import type { MetricsAccess } from './MetricsAccess.js'

/** Per-request state the core security handlers fill in. */
export type GatewayLocals = {
  /** The live session of `X-Session-Token` (or the browser cookie on GET), when there is one. */
  session?: ValidSession | undefined
  /** The `/llm` API key of `Authorization: Bearer sk-p2s-…` on `/llm/v1` (its wallet is the caller). */
  apiKey?: { wallet: string; key_id: string } | undefined
  /** The request's one session lookup, shared by the session security handlers (`securityStage`). */
  sessionLookup?: Promise<ValidSession | undefined> | undefined
}

/** A roster member as the public roster shows it (`RosterItem` of the document). */
export type RosterMember = {
  role: string
  label: string
  address: string | null
  entity_id: string
  boardroom_weight: number
}

/**
 * Everything handlers reach through `ctx.services`: every service of the one graph
 * (`src/services/createServiceGraph.ts` builds them all), listed here rather than merged in from each domain.
 */
export interface Services {
  config: GatewayConfig
  db: Kysely<Database>
  dialect: DatabaseDialect
  logger: Logger
  /** Epoch seconds. */
  now: () => number
  catalogue: Catalogue
  login: LoginService
  /** x402 sign-in-with-x: a wallet's proof in the request itself, accepted wherever a session is. */
  siwx: SignInWithX
  quota: CostQuota
  /** The payment rails, registered once at start (src/x402/RailRegistry.ts). */
  rails: RailRegistry
  /** x402 payments of cost calls past the quota. */
  costPayments: CostPayments
  /** x402 `batch-settlement` (undefined: not configured). */
  batchSettlement: BatchSettlement | undefined
  /** The usage ledger of cost calls (`llm_usage`). */
  usage: UsageLedger
  /** Time to first token, tokens/s per model (`/metrics`). */
  llmMetrics: LlmMetrics
  gate: ArrivalGate
  /**
   * The model server(s) — one, or several routed by model and load (`SERVICE_LLM__MODELSERVER__BASE_URL`) — to
   * read: health, installed models. Everything that makes them generate or embed goes through `meter`.
   */
  modelServer: ModelServers
  /** The one meter of every call that makes the model server work (quota, cap, count, ledger, settlement). */
  meter: Meter
  marketplace: Marketplace
  inbound: InboundMetrics
  /** This instance among several on one database (identity, heartbeat). */
  instance: InstanceRegistry
  /** Whether this replica takes new work (`GET /health/ready`); draining from the stop signal on. */
  readiness: Readiness
  /** Public cabinet roster lookup, provided by the shadow domain (`undefined` = no cabinet). */
  cabinetRoster?: ((company: string) => Promise<RosterMember[] | undefined>) | undefined
  /** Overlord address for the permissions view, provided by the shadow domain. */
  overlordAddress?: (() => string | undefined) | undefined
  /** Prometheus text exposition for `/metrics`. */
  metricsText: () => Promise<string>
  /** Who may read `/metrics`: loopback, or the `SERVICE_METRICS__TOKEN` bearer. */
  metricsAccess: MetricsAccess
  /** More dependency checks of `/health/detailed`, provided by a domain (paid storage). */
  healthChecks?: ExtraChecks | undefined
  /** The shadow-overlord tier: challenges, bearer tokens, vault, cabinets. */
  shadow: ShadowTier
  /** Paid storage. */
  storage: StorageService
  /** The receipt batch (src/services/createBatchService.ts). */
  batch: BatchService
  /** Per-wallet `/llm` API keys. */
  llmKeys: LlmKeys
  /** The OpenAI-compatible `/llm/v1` proxy. */
  openAi: OpenAiProxy
  /** `/coreagent`: the wallet's agent with memories. */
  coreAgent: CoreAgent
  /**
   * The MCP endpoint: its tools (from the document's `x-mcp-tools`, read at start), its settings and — set by
   * the app from its built plug-ins — the tools it serves to a request (a left-out domain's are not among them).
   */
  mcp: { catalog: McpToolSpec[]; config: McpConfig; served?: ((ctx: HandlerContext) => readonly McpTool[]) | undefined }
  /**
   * Counts one more request of an address against the per-address rate limit (set by the app with its
   * rate-limit stage): each further tool call of one `/mcp` request takes one.
   */
  rateLimit?: { take(address: string): Promise<{ allowed: boolean; retryAfterS: number }> } | undefined
  /**
   * The app's error catalogue (set by the app, composed from the core's and its plug-ins' rows): a thrown
   * error's status and `Error` body, for what answers outside the error stage (tool results, stream ends, usage records).
   */
  errors?: ErrorMapping | undefined
}

/** What the error catalogue answers for a thrown error (`src/handlers/errorCatalogue.ts`). */
export type ErrorMapping = {
  /** The status and `Error` body, or `undefined` when the error is not catalogued (a fault). */
  toResult(error: unknown): UnroutedResult | undefined
  /** The status (500 when not catalogued). */
  statusOf(error: unknown): number
}

/** The core services every domain receives (it takes what it needs). */
export type CoreServices = Pick<Services, 'config' | 'db' | 'dialect' | 'logger' | 'now' | 'catalogue' | 'instance' | 'modelServer' | 'marketplace' | 'rails'> & {
  /** The database URL (e.g. for a second connection). */
  databaseUrl: string
  /** Environment the app was configured from (each domain parses its own section). */
  env: Record<string, string | undefined>
  /** The database's change feed (`src/cache/`), when it has one. */
  changeFeed?: ChangeFeed | undefined
  /** The database's commit that keeps the disk sync off the event loop (`src/db/createBackgroundCommit.ts`), when it has one. */
  backgroundCommit?: BackgroundCommit | undefined
}

/** What a handler (and a domain's security handler) gets: the validated request and the services. */
export type HandlerContext = RequestContext<GatewayLocals> & { services: Services }

/** What a domain contributes at start. */
export type DomainSetup = {
  /** Merged into `ctx.services`. */
  services?: Partial<Services>
  /**
   * Security handlers by scheme name (e.g. `overlordBearer`): truthy = satisfied. The graph's domains leave
   * these to the HTTP side (`src/handlers/<domain>/<domain>Security.ts`, joined to the domain in its `plugin.ts`).
   */
  securityHandlers?: Record<string, (ctx: HandlerContext) => unknown>
  /** Answer when a scheme of this domain is not satisfied (default for `overlordBearer`: 401 `bearer_required`/…). */
  unauthorized?: Record<string, (ctx: HandlerContext) => HttpResult | Promise<HttpResult>>
  /** The domain's metrics, served by `/metrics` with the core's. */
  metrics?: Registry
  /** Started after the app is built (background loops); stopped by `close`. */
  start?: () => void | Promise<void>
  /** The stop signal (a rolling restart): stop taking new background work; `close` follows once requests are done. */
  drain?: () => void | Promise<void>
  close?: () => void | Promise<void>
}

/** A domain's start hook, run in order by the service graph. Throw a `ConfigError` for bad configuration. */
export type DomainInit = (core: CoreServices) => DomainSetup | Promise<DomainSetup>

/** The core services of a domain built before sessions and the agent registry: all but the marketplace. */
export type EarlyCoreServices = Omit<CoreServices, 'marketplace'>

/** The start hook of a domain the sessions or the agent registry read (the shadow tier's overlord and rosters). */
export type EarlyDomainInit = (core: EarlyCoreServices) => DomainSetup | Promise<DomainSetup>
