import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import express, { type NextFunction, type Request, type Response } from 'express'
import type { Logger } from 'pino'
import {
  createOpenApiRouter,
  loadOpenApiDocument,
  type HttpResult,
  middleware,
  onError,
  onResponse,
  type OpenApiRouter,
  type RequestContext,
  type ResponseInfo,
  type ResponseValidationMode,
  type ResponseValidationReport,
  step,
} from '../shared/http/index.js'
import type { OperationId } from '../../generated/modelserver/operationIds.js'
import { serverSpanStage } from '../shared/tracing/serverSpanStage.js'
import { startTracing } from '../shared/tracing/startTracing.js'
import type { ModelServerConfig } from './config.js'
import type { Engine } from './engine/Engine.js'
import { createErrorMapper } from './createErrorMapper.js'
import { createPathRedactor } from './errors.js'
import { checkBlob, pushBlob } from './handlers/blobs.js'
import { createModel } from './handlers/create.js'
import { chat, embed, embeddings, generate } from './handlers/generation.js'
import { copyModel, deleteModel, getStatus, getVersion, listModels, listRunningModels, showModel } from './handlers/models.js'
import * as openai from './handlers/openai.js'
import { anthropicMessages, openaiResponses } from './handlers/surfaces.js'
import { RegistryServer } from './handlers/registryServer.js'
import { transfer } from './handlers/transfer.js'
import { ApiKeys } from './http/ApiKeys.js'
import { createBrowserGuard } from './http/browserGuard.js'
import { createApiKeyGuard } from './http/createApiKeyGuard.js'
import { nullAsAbsentStage } from './http/nullAsAbsent.js'
import { ollamaBodyStage } from './http/ollamaBodyStage.js'
import { createOriginMatcher } from './http/corsOrigins.js'
import { installDefaultModels } from './installDefaultModels.js'
import { ModelServerMetrics } from './metrics/ModelServerMetrics.js'
import { createFindModel, createInspector, type ModelServerContext } from './ModelServerContext.js'
import { RegistryClient } from './registry/RegistryClient.js'
import type { HostResolver } from './registry/RegistryEgress.js'
import { ResidencyManager } from './residency/ResidencyManager.js'
import { ModelStore } from './store/ModelStore.js'
import { errorShapesOf } from './errorShapes.js'

/**
 * Operations whose JSON may carry base64 images or long inputs: `MODELSERVER_MAX_JSON_BYTES` (64 MiB). Every other
 * JSON body (management calls, registry manifests) is limited to 1 MiB.
 */
const LARGE_BODY_OPERATIONS = new Set(['generate', 'chat', 'embed', 'embeddings', 'openaiChatCompletions', 'openaiCompletions', 'openaiEmbeddings', 'openaiResponses', 'anthropicMessages'])

/** `openapi/modelserver.yaml` of the tree: two folders up from `src/modelserver/`, three from the compiled `dist/src/modelserver/`. */
export const modelServerSpecPath = ['../../openapi/modelserver.yaml', '../../../openapi/modelserver.yaml']
  .map((relative) => path.resolve(path.dirname(fileURLToPath(import.meta.url)), relative))
  .find((candidate) => existsSync(candidate)) ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi/modelserver.yaml')

export type ModelServerOptions = {
  config: ModelServerConfig
  /** The inference engine (one per process); created from `config.threads` when absent. */
  engine?: Engine
  logger?: Logger
  /** Default `warn`; tests use `error`. */
  responseValidation?: ResponseValidationMode
  onResponseValidationError?: (report: ResponseValidationReport) => void
  /** How registry host names resolve (tests inject a stub; default the system resolver). */
  resolveHost?: HostResolver
  /** Process metrics (CPU, heap) in /metrics; default true. */
  processMetrics?: boolean
  /** With `config.tracing.enabled`: where spans go instead of the OTLP endpoint (tests: an in-memory exporter). */
  spanExporter?: SpanExporter
}

export type ModelServer = {
  app: express.Express
  ctx: ModelServerContext
  router: OpenApiRouter
  /** The API keys in force (`reload()` on SIGHUP). */
  apiKeys: ApiKeys
  /** Unloads every model and frees the engine (when it was created here). */
  close(): Promise<void>
}

type Handler = (req: RequestContext) => HttpResult | Promise<HttpResult>

/** Operations whose body is raw bytes (read from `req.raw` by the handler, not validated as JSON). */
const rawBodyOperations: ReadonlySet<string> = new Set(['pushBlob', 'registryPatchUpload', 'registryCompleteUpload'])
/**
 * Operations whose requests are not validated: the raw-byte ones, and `checkBlob`, whose digest its handler
 * reads as `pushBlob`'s does (parseApiBlobDigest: one reading, one message, for both).
 */
const unvalidatedOperations: ReadonlySet<string> = new Set([...rawBodyOperations, 'checkBlob'])

export async function createModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const { config, logger } = options
  const ownEngine = !options.engine
  const engine = options.engine ?? (await (await import('./engine/createEngine.js')).createEngine({ threads: config.threads }))
  const ctx = await createModelServerContext(options, engine)
  const registryClient = new RegistryClient({ store: ctx.store, registryUrl: config.registryUrl, registries: config.registries, resolve: options.resolveHost, maxBlobBytes: config.maxBlobBytes, inspect: (path) => engine.inspect(path) })
  const registry = new RegistryServer(ctx)
  const document = loadOpenApiDocument(modelServerSpecPath)
  const errorShapeOf = errorShapesOf(document) // Ollama, OpenAI or OCI: what the document declares for the route
  const mapError = createErrorMapper(logger, createPathRedactor([config.modelsDir, path.resolve(config.modelsDir), process.cwd(), os.tmpdir(), os.homedir()]), errorShapeOf)
  const apiKeys = new ApiKeys({ keys: config.apiKeys, file: config.apiKeysFile, onWarning: (message) => logger?.warn(message) })
  const origins = createOriginMatcher(config.origins)
  if (origins.ignored.length > 0) logger?.warn({ ignored: origins.ignored }, 'OLLAMA_ORIGINS entries ignored (two * or no scheme)')
  const router = createModelServerRouter(options, { document, handlers: modelServerHandlers(ctx, registryClient, registry) })

  // Traces (off by default): the request's span joins the caller's trace (the gateway sends `traceparent`).
  const tracing = await startTracing(config.tracing, { exporter: options.spanExporter, logger })

  // The pipeline, as Ollama's: CORS and the Host check first; no rate limit and no gate (a local server
  // answers whoever reaches it, as Ollama does); then the document's stages.
  const app = express()
  app.disable('x-powered-by')
  app.use(
    router.pipeline(
      ...(tracing.enabled ? [middleware('tracing', serverSpanStage({ tracer: tracing.tracer, routeOf: router.matchOperation }))] : []), // 0. tracing (when on)
      middleware('browser guard', createBrowserGuard({ origins, listenHost: config.host, allowedHosts: config.allowedHosts })), // 1. CORS: refused origins and foreign Host names get an empty 403 (through on-error)
      // 2. authentication: with API keys configured every route needs one (401 in the route's error shape, through
      // on-error); before the route, so an unrouted path tells nothing to a caller without a key.
      middleware('api key', createApiKeyGuard(apiKeys)),
      step('route', router.stages.route), //        4. route (HEAD: the document's HEAD operation, else the GET one)
      step('security', router.stages.security), //  5. security (the document requires none)
      step('body', ollamaBodyStage({ operations: router.operations, rawBodyOperations, limit: (operationId) => (LARGE_BODY_OPERATIONS.has(operationId) ? config.maxJsonBytes : 1 << 20) })), // 6a. the body, read as Ollama reads it
      step('validation', router.stages.validation), // 6. validation against the document
      step('null as absent', nullAsAbsentStage(document, router.operations, (id) => errorShapeOf(id) === 'ollama')), // 6b. an Ollama body's null members: absent, as Go reads them
      step('handler', router.stages.handler), //    7. handler
      router.stages.respond, //                     8. respond: every answer validated against the document, sent
      onError('on-error', (error, r, exchange) => mapError(error, r?.operationId ?? router.routeOf(exchange)?.operationId, exchange.path)), // 9. on-error: every refusal in the route's declared shape (createErrorMapper)
      onResponse('on-response', recordResponse(ctx.metrics)), // 10. on-response: request metrics
    ),
  )
  // Anything that escapes the pipeline still answers the route's error shape.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const result = mapError(error, router.matchOperation(req.method, req.path)?.operationId)
    if (res.headersSent) return void res.end()
    res.status(result.status).json(result.body)
  })

  return {
    app,
    ctx,
    router,
    apiKeys,
    close: async () => {
      await registry.dispose()
      await ctx.residency.dispose()
      if (ownEngine) await engine.dispose()
      await tracing.close()
    },
  }
}

/** The model store (default models installed when configured), the residency manager and the metrics: what every handler reads. */
async function createModelServerContext(options: ModelServerOptions, engine: Engine): Promise<ModelServerContext> {
  const { config, logger } = options
  const store = new ModelStore(config.modelsDir)
  await store.init()
  if (config.installDefaults) {
    const installed = await installDefaultModels(store)
    if (installed.length > 0) logger?.info({ installed }, 'installed default models')
  }
  const metrics = new ModelServerMetrics({ processMetrics: options.processMetrics ?? true })
  const residency = new ResidencyManager({
    engine,
    maxLoadedBytes: config.maxLoadedBytes,
    maxQueue: config.maxQueue,
    defaultNumCtx: config.defaultNumCtx,
    events: {
      onLoad: (model, ns) => {
        metrics.loads.inc({ model })
        metrics.loadSeconds.observe({ model }, ns / 1e9)
        logger?.info({ model, loadMs: Math.round(ns / 1e6) }, 'model loaded')
      },
      onUnload: (model) => {
        metrics.unloads.inc({ model })
        logger?.info({ model }, 'model unloaded')
      },
      onChange: (residents) => metrics.setResidents(residents),
    },
  })
  return { config, engine, store, residency, metrics, startedAt: new Date(), inspect: createInspector(engine), findModel: createFindModel(store) }
}

/** The handler of every operation of `openapi/modelserver.yaml`, by operationId (the type checks none is missing). */
function modelServerHandlers(ctx: ModelServerContext, registryClient: RegistryClient, registry: RegistryServer): Record<OperationId, Handler> {
  const { metrics } = ctx
  return {
    generate: (r) => generate(ctx, r),
    chat: (r) => chat(ctx, r),
    embed: (r) => embed(ctx, r),
    embeddings: (r) => embeddings(ctx, r),
    getRoot: () => ({ status: 200, contentType: 'text/plain; charset=utf-8', body: 'Ollama is running' }),
    listRunningModels: () => listRunningModels(ctx),
    getVersion: () => getVersion(ctx),
    listModels: () => listModels(ctx),
    showModel: (r) => showModel(ctx, r),
    createModel: (r) => createModel(ctx, r),
    copyModel: (r) => copyModel(ctx, r),
    deleteModel: (r) => deleteModel(ctx, r),
    pullModel: (r) => transfer('pull', ctx, registryClient, r),
    pushModel: (r) => transfer('push', ctx, registryClient, r),
    checkBlob: (r) => checkBlob(ctx, r),
    pushBlob: (r) => pushBlob(ctx, r),
    getMetrics: async () => ({ status: 200, contentType: metrics.registry.contentType, body: await metrics.text() }),
    registryCheck: () => registry.check(),
    registryGetManifest: (r) => (r.method === 'HEAD' ? registry.headManifest(r) : registry.getManifest(r)),
    registryHeadManifest: (r) => registry.headManifest(r),
    registryPutManifest: (r) => registry.putManifest(r),
    registryGetBlob: (r) => (r.method === 'HEAD' ? registry.headBlob(r) : registry.getBlob(r)),
    registryHeadBlob: (r) => registry.headBlob(r),
    registryStartUpload: (r) => registry.startUpload(r),
    registryPatchUpload: (r) => registry.patchUpload(r),
    registryCompleteUpload: (r) => registry.completeUpload(r),
    openaiChatCompletions: (r) => openai.chatCompletions(ctx, r),
    openaiCompletions: (r) => openai.completions(ctx, r),
    openaiEmbeddings: (r) => openai.embeddings(ctx, r),
    openaiListModels: () => openai.listModels(ctx),
    openaiRetrieveModel: (r) => openai.retrieveModel(ctx, r),
    openaiResponses: (r) => openaiResponses(ctx, r),
    anthropicMessages: (r) => anthropicMessages(ctx, r),
    getStatus: () => getStatus(ctx),
  }
}

type RouterParts = {
  document: Record<string, unknown>
  handlers: Record<OperationId, Handler>
}

/** The request metrics, once a response is finished. */
function recordResponse(metrics: ModelServerMetrics) {
  return (info: ResponseInfo) => {
    const operation = info.operationId ?? 'unrouted'
    metrics.requests.inc({ operation, status: String(info.status) })
    metrics.requestDuration.observe({ operation }, info.durationMs / 1000)
  }
}

/** The document's router (its refusals — no route, an invalid request or body — go to the list's on-error). */
function createModelServerRouter(options: ModelServerOptions, { document, handlers }: RouterParts): OpenApiRouter {
  return createOpenApiRouter({
    document,
    handlers,
    logger: options.logger,
    responseValidation: options.responseValidation ?? 'warn',
    onResponseValidationError: options.onResponseValidationError,
    validateRequest: (r) => !unvalidatedOperations.has(r.operationId),
    jsonLimit: '512mb',
  })
}
