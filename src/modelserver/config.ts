import path from 'node:path'
import { otlpTracesUrl } from '../shared/tracing/otlpTracesUrl.js'
import type { TracingSettings } from '../shared/tracing/startTracing.js'
import { ollamaAllowedOrigins } from './http/corsOrigins.js'
import { parseOllamaHost } from './parseOllamaHost.js'
import { parseKeepAlive } from './residency/parseKeepAlive.js'
import { DEFAULT_REGISTRY_HOST } from './store/ModelName.js'

export type ModelServerConfig = {
  /** Listen address; `''` = every interface. */
  host: string
  port: number
  /** Origins browsers may call from (Ollama's defaults plus `OLLAMA_ORIGINS`; `*` = any). */
  origins: string[]
  /** Ollama's models directory (`blobs/`, `manifests/`). */
  modelsDir: string
  /** Memory budget of resident models, bytes (default 3 GB). */
  maxLoadedBytes: number
  /** Requests per model queued or running before 503 (Ollama's OLLAMA_MAX_QUEUE, default 512). */
  maxQueue: number
  /** Default keep_alive, ms (5m). */
  keepAliveMs: number
  defaultNumCtx: number
  /** Base URL of the default registry host (`registry.ollama.ai`). */
  registryUrl: string
  /**
   * `host[:port]` of the registries `/api/pull` and `/api/push` may address (`MODELSERVER_REGISTRIES`, comma
   * separated; default Ollama's `registry.ollama.ai`). Any other host in a model name is refused before it is
   * contacted.
   */
  registries: string[]
  /** API keys (`MODELSERVER_API_KEYS`, comma separated); with these or a keys file, every route needs one. */
  apiKeys: string[]
  /** A file of API keys, one per line (`MODELSERVER_API_KEYS_FILE`), re-read on change and on SIGHUP. */
  apiKeysFile: string | undefined
  /** Host names accepted in `Host` besides this machine's (`MODELSERVER_ALLOWED_HOSTS`, comma separated). */
  allowedHosts: string[]
  /** `MODELSERVER_ALLOW_UNAUTHENTICATED=1`: a non-loopback bind without keys is fronted by something that authenticates. */
  allowUnauthenticated: boolean
  /** Largest JSON body of generation, chat and embeddings (`MODELSERVER_MAX_JSON_BYTES`, 64 MiB); other routes 1 MiB. */
  maxJsonBytes: number
  /** Largest blob accepted by `POST /api/blobs` and a registry upload (`MODELSERVER_MAX_BLOB_BYTES`, 256 GiB): 413 past it. */
  maxBlobBytes: number
  /** Registry upload sessions open at once (`MODELSERVER_MAX_UPLOAD_SESSIONS`, 16): 429 past it. */
  maxUploadSessions: number
  /** Install the default tiny models when missing (first run). */
  installDefaults: boolean
  /** llama.cpp CPU threads (undefined = engine default). */
  threads: number | undefined
  /**
   * OpenTelemetry traces, off by default (`MODELSERVER_TRACING_ENABLED=1`): a server span per request, joined to
   * the caller's trace when it sends `traceparent` (the gateway does), exported over OTLP/HTTP to
   * `MODELSERVER_TRACING_OTLP_ENDPOINT` (else the standard `OTEL_EXPORTER_OTLP_*`); `service.name` from
   * `OTEL_SERVICE_NAME` (default `pay2store-modelserver`).
   */
  tracing: TracingSettings
  version: string
}

const VERSION = '0.12.6'

const GB = 1024 ** 3

/**
 * Reads `MODELSERVER_*`, with Ollama's variables as fallbacks (`OLLAMA_HOST`, `OLLAMA_ORIGINS`, `OLLAMA_MODELS`,
 * `OLLAMA_KEEP_ALIVE`, `OLLAMA_MAX_QUEUE`): a `MODELSERVER_*` setting wins over its Ollama counterpart.
 */
export function loadModelServerConfig(env: NodeJS.ProcessEnv = process.env): ModelServerConfig {
  const dataDir = env.SERVICE_DATA_DIR ?? path.join(process.cwd(), 'data')
  const ollamaHost = parseOllamaHost(env.OLLAMA_HOST)
  return {
    host: env.MODELSERVER_HOST ?? ollamaHost.host,
    port: int(env.MODELSERVER_PORT, ollamaHost.port),
    origins: ollamaAllowedOrigins(env.MODELSERVER_ORIGINS ?? env.OLLAMA_ORIGINS),
    modelsDir: env.MODELSERVER_MODELS ?? env.OLLAMA_MODELS ?? path.join(dataDir, 'models'),
    maxLoadedBytes: int(env.MODELSERVER_MAX_LOADED_BYTES, 3 * GB),
    maxQueue: int(env.MODELSERVER_MAX_QUEUE ?? env.OLLAMA_MAX_QUEUE, 512),
    keepAliveMs: parseKeepAlive(env.MODELSERVER_KEEP_ALIVE ?? env.OLLAMA_KEEP_ALIVE, 5 * 60_000),
    defaultNumCtx: int(env.MODELSERVER_NUM_CTX, 2048),
    registryUrl: (env.MODELSERVER_REGISTRY_URL ?? 'https://registry.ollama.ai').replace(/\/+$/, ''),
    registries: parseRegistries(env.MODELSERVER_REGISTRIES),
    maxJsonBytes: int(env.MODELSERVER_MAX_JSON_BYTES, 64 << 20),
    maxBlobBytes: int(env.MODELSERVER_MAX_BLOB_BYTES, 256 * 2 ** 30),
    maxUploadSessions: int(env.MODELSERVER_MAX_UPLOAD_SESSIONS, 16),
    apiKeys: list(env.MODELSERVER_API_KEYS),
    apiKeysFile: env.MODELSERVER_API_KEYS_FILE?.trim() || undefined,
    allowedHosts: list(env.MODELSERVER_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    allowUnauthenticated: env.MODELSERVER_ALLOW_UNAUTHENTICATED === '1',
    installDefaults: env.MODELSERVER_INSTALL_DEFAULTS !== '0',
    threads: env.MODELSERVER_THREADS ? int(env.MODELSERVER_THREADS, 1) : undefined,
    tracing: tracing(env),
    version: VERSION,
  }
}

function tracing(env: NodeJS.ProcessEnv): TracingSettings {
  const enabled = env.MODELSERVER_TRACING_ENABLED === '1'
  const ratio = env.MODELSERVER_TRACING_SAMPLE_RATIO?.trim() || undefined
  if (ratio !== undefined && !(/^\d*\.?\d+$/.test(ratio) && Number(ratio) <= 1)) throw new Error(`MODELSERVER_TRACING_SAMPLE_RATIO must be a number from 0 to 1 (got "${ratio}")`)
  const { url, variable, valid } = otlpTracesUrl(env, 'MODELSERVER_TRACING_OTLP_ENDPOINT')
  if (enabled && !valid) throw new Error(`${variable} must be an http(s) URL of an OTLP/HTTP collector (got "${url}")`)
  return {
    enabled,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'pay2store-modelserver',
    serviceVersion: VERSION,
    otlpTracesUrl: url,
    sampleRatio: ratio === undefined ? 1 : Number(ratio),
  }
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
}

/**
 * Why this configuration must not start, or undefined: a server reachable from the network with no API key lets
 * anyone on that network pull, push, delete and create models and use its CPU (Ollama's own default). Loopback
 * binds behave as before; another bind needs keys, or `MODELSERVER_ALLOW_UNAUTHENTICATED=1` from an operator
 * whose proxy authenticates in front of it.
 */
export function exposureProblem(config: ModelServerConfig): string | undefined {
  if (config.apiKeys.length > 0 || config.apiKeysFile !== undefined || config.allowUnauthenticated) return undefined
  const host = config.host.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return undefined
  return (
    `refusing to listen on ${config.host === '' ? 'every interface' : config.host} without API keys: anyone who can reach it could ` +
    'pull, push, delete and create models and run them. Set MODELSERVER_API_KEYS (or MODELSERVER_API_KEYS_FILE; ' +
    'make a key with `openssl rand -hex 32`), or, if a proxy in front of it authenticates every request, ' +
    'MODELSERVER_ALLOW_UNAUTHENTICATED=1.'
  )
}

function parseRegistries(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [DEFAULT_REGISTRY_HOST]
  return value
    .split(/[\s,]+/)
    .map((h) => h.trim().toLowerCase().replace(/^[a-z]+:\/\//, '').replace(/\/+$/, ''))
    .filter((h) => h !== '')
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`invalid number ${value}`)
  return Math.floor(n)
}

export { defaultThreadCount as defaultThreads } from './engine/threads.js'
