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
  type RequestValidationIssue,
  type ResponseValidationMode,
  type ResponseValidationReport,
  step,
} from '../shared/http/index.js'
import type { OperationId } from '../../generated/modelserver/operationIds.js'
import { serverSpanStage } from '../shared/tracing/serverSpanStage.js'
import { startTracing } from '../shared/tracing/startTracing.js'
import type { ModelServerConfig } from './config.js'
import type { Engine } from './engine/Engine.js'
import { EngineError, engineErrorStatus } from './engine/errors.js'
import { createPathRedactor, INTERNAL_ERROR_MESSAGE, ModelServerError, modelServerErrorStatus } from './errors.js'
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
import { ollamaBodyStage } from './http/ollamaBodyStage.js'
import { createOriginMatcher } from './http/corsOrigins.js'
import { installDefaultModels } from './installDefaultModels.js'
import { ModelServerMetrics } from './metrics/ModelServerMetrics.js'
import { createFindModel, createInspector, type ModelServerContext } from './ModelServerContext.js'
import { ociError, ociErrorFor, ociValidationError } from './registry/ociErrors.js'
import { RegistryClient } from './registry/RegistryClient.js'
import type { HostResolver } from './registry/RegistryEgress.js'
import { ResidencyManager } from './residency/ResidencyManager.js'
import { ModelStore } from './store/ModelStore.js'
import { isOpenAIPath, openaiErrorBody, toOpenAIError } from './openai/openaiError.js'
import { type ErrorShape, errorShapesOf } from './errorShapes.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { anthropicErrorBody, toAnthropicError } from './anthropic/anthropicError.js'

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
 * Operations whose requests are not validated: the raw-byte ones, and `checkBlob`, for which a malformed
 * digest is a blob that does not exist (404, as Ollama; the document has no 400 for it).
 */
const unvalidatedOperations: ReadonlySet<string> = new Set([...rawBodyOperations, 'checkBlob'])

/** The OCI distribution routes (`/v2/...`): their errors have the distribution specification's shape. */
function isRegistryPath(p: string): boolean {
  return p === '/v2' || p.startsWith('/v2/')
}

export async function createModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const { config, logger } = options
  const ownEngine = !options.engine
  const engine = options.engine ?? (await (await import('./engine/createEngine.js')).createEngine({ threads: config.threads }))
  const ctx = await createModelServerContext(options, engine)
  const registryClient = new RegistryClient({ store: ctx.store, registryUrl: config.registryUrl, registries: config.registries, resolve: options.resolveHost })
  const registry = new RegistryServer(ctx)
  const document = loadOpenApiDocument(modelServerSpecPath)
  const errorShapeOf = errorShapesOf(document) // Ollama, OpenAI or OCI: what the document declares for the route
  const mapError = createErrorMapper(logger, createPathRedactor([config.modelsDir, path.resolve(config.modelsDir), process.cwd(), os.tmpdir(), os.homedir()]), errorShapeOf)
  const apiKeys = new ApiKeys({ keys: config.apiKeys, file: config.apiKeysFile, onWarning: (message) => logger?.warn(message) })
  const origins = createOriginMatcher(config.origins)
  if (origins.ignored.length > 0) logger?.warn({ ignored: origins.ignored }, 'OLLAMA_ORIGINS entries ignored (two * or no scheme)')
  const router = createModelServerRouter(options, { document, handlers: modelServerHandlers(ctx, registryClient, registry), errorShapeOf })

  // Traces (off by default): the request's span joins the caller's trace (the gateway sends `traceparent`).
  const tracing = await startTracing(config.tracing, { exporter: options.spanExporter, logger })

  // The pipeline, as Ollama's: CORS and the Host check first; no rate limit and no gate (a local server
  // answers whoever reaches it, as Ollama does); then the document's stages.
  const app = express()
  app.disable('x-powered-by')
  app.use(
    router.pipeline(
      ...(tracing.enabled ? [middleware('tracing', serverSpanStage({ tracer: tracing.tracer, routeOf: router.matchOperation }))] : []), // 0. tracing (when on)
      middleware(
        'browser guard',
        createBrowserGuard({
          origins,
          listenHost: config.host,
          allowedHosts: config.allowedHosts,
          forbid: (req, res) => void router.send(req, res, { status: modelServerErrorStatus.forbidden }, router.matchOperation(req.method, req.path)),
        }),
      ), //                                         1. CORS: refused origins and foreign Host names get 403
      // 2. authentication: with API keys configured every route needs one (401 in the route's error shape, through
      // on-error); before the route, so an unrouted path tells nothing to a caller without a key.
      middleware('api key', createApiKeyGuard(apiKeys)),
      step('route', router.stages.route), //        4. route (HEAD: the document's HEAD operation, else the GET one)
      step('security', router.stages.security), //  5. security (the document requires none)
      step('body', ollamaBodyStage({ operations: router.operations, rawBodyOperations, limit: (operationId) => (LARGE_BODY_OPERATIONS.has(operationId) ? config.maxJsonBytes : 1 << 20), unreadable: (req, status, e) => unreadableBody(errorShapeOf(router.matchOperation(req.method, req.path)?.operationId), status, e) })), // 6a. the body, read as Ollama reads it
      step('validation', router.stages.validation), // 6. validation against the document
      step('handler', router.stages.handler), //    7. handler
      router.stages.respond, //                     8. respond: every answer validated against the document, sent
      onError('on-error', (error, r, exchange) => mapError(error, r?.operationId ?? router.routeOf(exchange)?.operationId, exchange.path)), // 9. on-error: in the route's declared shape (createErrorMapper)
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
  errorShapeOf: (operationId: string | undefined) => ErrorShape
}

/** The request metrics, once a response is finished. */
function recordResponse(metrics: ModelServerMetrics) {
  return (info: ResponseInfo) => {
    const operation = info.operationId ?? 'unrouted'
    metrics.requests.inc({ operation, status: String(info.status) })
    metrics.requestDuration.observe({ operation }, info.durationMs / 1000)
  }
}

/** The document's router: each refusal (invalid request, unknown route, thrown error) in the route's declared shape. */
function createModelServerRouter(options: ModelServerOptions, { document, handlers, errorShapeOf }: RouterParts): OpenApiRouter {
  return createOpenApiRouter({
    document,
    handlers,
    logger: options.logger,
    responseValidation: options.responseValidation ?? 'warn',
    onResponseValidationError: options.onResponseValidationError,
    validateRequest: (r) => !unvalidatedOperations.has(r.operationId),
    invalidRequest: (r, errors) => invalidRequestAnswer(errorShapeOf(r.operationId), errors),
    unrouted: (r) => unroutedAnswer(r),
    jsonLimit: '512mb',
  })
}

/** A request the document refuses, in the route's shape: OCI's, OpenAI's (with the field at fault), Anthropic's or Ollama's. */
function invalidRequestAnswer(shape: ErrorShape, errors: ReadonlyArray<RequestValidationIssue>): HttpResult {
  if (shape === 'oci') return ociValidationError(errors)
  // The `/v1` (OpenAI-compatible) routes answer OpenAI's error shape with the same statuses.
  const status = modelServerErrorStatus.invalid_request
  if (shape === 'openai') return { status, body: openaiErrorBody(status, ollamaValidationMessage(errors), null, openaiParamOf(errors)) }
  if (shape === 'anthropic') return { status, body: anthropicErrorBody(status, ollamaValidationMessage(errors)) }
  return { status, body: { error: ollamaValidationMessage(errors) } }
}

/** No operation for the path (404) or the method (405), in the shape of the path's family. */
function unroutedAnswer(r: { reason: string; method: string; path: string }): HttpResult & { component: string } {
  const shape = shapeOfUnroutedPath(r.path)
  if (shape === 'oci') {
    const result = r.reason === 'not_found' ? ociError('NAME_UNKNOWN', { path: r.path }) : ociError('UNSUPPORTED', { method: r.method })
    return { ...result, component: 'RegistryError' }
  }
  const result =
    r.reason === 'not_found'
      ? { status: modelServerErrorStatus.not_found, body: { error: `404 page not found: ${r.method} ${r.path}` } }
      : { status: modelServerErrorStatus.method_not_allowed, body: { error: `method ${r.method} not allowed on ${r.path}` } }
  return shape === 'openai' ? { ...toOpenAIError(result), component: 'OpenAIError' } : { ...result, component: 'Error' }
}

/** A body that cannot be read, in the route's error shape (registry: the distribution specification's). */
function unreadableBody(shape: ErrorShape, status: number, e: { type?: string; message?: string }): HttpResult {
  if (shape === 'oci') {
    const result = ociError('MANIFEST_INVALID', { reason: e.type === 'entity.parse.failed' ? 'invalid JSON' : (e.type ?? 'unreadable body') })
    return { status, body: result.body }
  }
  const message = e.type === 'entity.parse.failed' ? `invalid JSON: ${e.message ?? ''}`.trim() : (e.message ?? 'bad request')
  if (shape === 'anthropic') return { status, body: anthropicErrorBody(status, message) }
  return { status, body: shape === 'openai' ? openaiErrorBody(status, message) : { error: message } }
}

/** A path no operation has declares nothing: its shape is the family's, by prefix (`/v1` OpenAI, `/v2` OCI). */
function shapeOfUnroutedPath(path: string): ErrorShape {
  return isRegistryPath(path) ? 'oci' : isOpenAIPath(path) ? 'openai' : 'ollama'
}

/**
 * A thrown error → the route's error body: `operationId` the route's (or the one the request would have reached,
 * for an error before the route); `path` decides the shape of a path no operation has.
 */
type ErrorMapper = (error: unknown, operationId: string | undefined, path?: string) => HttpResult & { component?: string }

/**
 * Maps a thrown error to the route's error body, once for every route: our own errors keep their status and short
 * message, anything else is a 500 with a generic message (its details, paths included, go to the server log only).
 * Each route answers the shape the document declares for it (`shapeOf`: Ollama, OpenAI, or the registry's OCI).
 * Known server directories are scrubbed from every message a client gets.
 */
export function createErrorMapper(logger: Logger | undefined, redact: (text: string) => string = (t) => t, shapeOf: (operationId: string | undefined) => ErrorShape = () => 'ollama'): ErrorMapper {
  const components = { ollama: 'Error', openai: 'OpenAIError', anthropic: 'AnthropicError', oci: 'RegistryError' } as const satisfies Record<ErrorShape, string>
  const render = renderError(logger, redact)
  return (error, operationId, path) => {
    const shape = operationId === undefined && path !== undefined ? shapeOfUnroutedPath(path) : shapeOf(operationId)
    const result = render(error, operationId, shape)
    // the headers the error carries (`WWW-Authenticate` of a refused key); a path no operation has: the body's schema
    const headers = error instanceof BaseError ? error.answer?.headers : undefined
    return { ...result, ...(headers ? { headers: { ...result.headers, ...headers } } : {}), ...(operationId === undefined ? { component: components[shape] } : {}) }
  }
}

/** The error's status and message (ours, or a generic 500 logged in full) in `shape`, the server's paths redacted. */
function renderError(logger: Logger | undefined, redact: (text: string) => string) {
  return (error: unknown, operationId: string | undefined, shape: ErrorShape): HttpResult => {
    let status = 500
    let message = INTERNAL_ERROR_MESSAGE
    if (error instanceof ModelServerError) {
      status = error.status
      message = error.shortMessage
    } else if (error instanceof EngineError) {
      status = engineErrorStatus[error.code] ?? 500
      message = error.shortMessage
    }
    if (status >= 500) logger?.error({ err: error, operationId }, message === INTERNAL_ERROR_MESSAGE ? 'unhandled error' : message)
    message = redact(message)
    if (shape === 'oci') {
      const result = ociErrorFor(error, message)
      return { ...result, body: JSON.parse(redact(JSON.stringify(result.body))) as unknown }
    }
    if (shape === 'openai') return toOpenAIError({ status, body: { error: message } }, error)
    if (shape === 'anthropic') return toAnthropicError({ status, body: { error: message } })
    return { status, body: { error: message } }
  }
}

/** OpenAI's `param` for a schema error: the body field at fault (`messages[0].role`). */
function openaiParamOf(issues: ReadonlyArray<RequestValidationIssue>): string | null {
  const first = issues[0]
  if (!first || first.location !== 'body' || !first.path || first.path === '/') return null
  return first.path
    .replace(/^\//, '')
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('')
}

/** Ollama phrases a missing model as `model is required`; otherwise the first schema error. */
function ollamaValidationMessage(issues: ReadonlyArray<RequestValidationIssue>): string {
  const first = issues[0]
  if (!first) return 'invalid request'
  const text = `${first.location}${first.path ? ` ${first.path}` : ''}: ${first.message}`
  if (/required property 'model'/.test(first.message) || (first.path === 'model' && /required/.test(first.message))) {
    return 'model is required'
  }
  return text
}
