import { isAbsolute, join, resolve } from 'node:path'
import { HOW_TO_MAKE_A_SECRET, weakSecretProblem } from '../shared/assessSecret.js'
import { otlpTracesUrl } from '../shared/tracing/otlpTracesUrl.js'
import type { TracingSettings } from '../shared/tracing/startTracing.js'
import { ConfigError } from './ConfigError.js'
import { type Env, envBool, envEnum, envHttpUrl, envHttpUrlList, envInt, envList, envOptionalString, envString } from './env.js'
import { type Profile, readProfile } from './profile.js'

const VERSION = '1.0.0'

export type ResponseValidationSetting = 'off' | 'warn' | 'error'

/** The gateway core's configuration. Other domains read their own sections (`src/<domain>/config.ts`). */
export type GatewayConfig = {
  /** `SERVICE_PROFILE`: `production` (default) or `devnet` (profile.ts; `src/main.ts` refuses a production start that lacks a setting). */
  profile: Profile
  port: number
  host: string
  dataDir: string
  /** `postgres://…` selects PostgreSQL; otherwise a SQLite file path. */
  databaseUrl: string
  /** SQLite's `synchronous` (see `createDatabase`): `full` by default. */
  sqliteSynchronous: 'full' | 'normal'
  /** Origin used in login messages and resource URLs, e.g. `http://localhost:8000` (no trailing slash). */
  publicOrigin: string
  /** `SERVICE_HARD_GATE_ENABLED`, read on every call (default on). */
  hardGateEnabled: () => boolean
  /**
   * `baseUrls`: one or more model servers (`SERVICE_LLM__MODELSERVER__BASE_URL`, comma-separated); `baseUrl` is
   * the first. `refreshMs`: how often the gateway re-reads each server's model list when there are several.
   */
  modelServer: {
    baseUrl: string
    baseUrls: string[]
    chatModel: string
    embedModel: string
    timeoutMs: number
    refreshMs: number
    /** `SERVICE_LLM__MODELSERVER__API_KEY`: sent as `Authorization: Bearer` to every model server (their `MODELSERVER_API_KEYS`). */
    apiKey: string | undefined
  }
  /**
   * `rpcUrl` (`SERVICE_LOGIN__RPC_URL`, https unless loopback; its chain id must be `chainId`): JSON-RPC of the
   * login chain. When set, smart-contract wallets sign in
   * too (EIP-1271 deployed, EIP-6492 not yet deployed), verified through the chain; unset, EOAs only.
   */
  login: { challengeTtlS: number; sessionTtlS: number; chainId: number; statement: string; rpcUrl: string | undefined }
  /**
   * Calls of cost endpoints per wallet per UTC day, and the price of one call past them, paid with x402
   * (atomic units of the 6-decimal USDC; 0 turns paying off). `costCallsPerNetworkPerDay`: calls of all the
   * wallets of one client network (`networkWidth`: IPv4 /24, IPv6 /48 by default) per UTC day; 0 = unlimited.
   */
  quota: {
    costCallsPerDay: number
    pricePerCallAtomic: bigint
    costCallsPerNetworkPerDay: number
    networkWidth: { ipv4Prefix: number; ipv6Prefix: number }
  }
  /**
   * How long a session caller's `/llm/generate` may keep a shared model loaded (`keep_alive`), in seconds: below
   * `minS` (an unload) becomes `minS`, above `maxS` (a pin) becomes `maxS`. The overlord is not clamped.
   */
  keepAlive: { minS: number; maxS: number }
  /**
   * `store`: where the counters live — `memory` (this process; one instance), `database` (the gateway's
   * database, shared by every instance on it) or `redis` (`redis.url`, shared by every replica on it; a hit
   * Redis cannot count is counted in the database). Default: `redis` when `SERVICE_RATE_LIMIT__REDIS_URL` is
   * set, else `memory`.
   */
  rateLimit: {
    windowS: number
    max: number
    store: 'memory' | 'database' | 'redis'
    redis: { url: string; prefix: string; timeoutMs: number } | undefined
  }
  /**
   * SIGTERM/SIGINT (a rolling restart): readiness fails at once; for `drainDelayMs` the replica still serves
   * what the balancer sends before it notices, and then until no request has come for `quietMs` (0: no wait;
   * a balancer slower than expected is still sending); then it stops accepting, finishes in-flight requests
   * (uploads, streams) until `deadlineMs` after the signal, cuts what is left, hands its work over and exits.
   */
  shutdown: { drainDelayMs: number; quietMs: number; deadlineMs: number }
  /**
   * This instance among several on one database: `id` (`SERVICE_INSTANCE_ID`; default kept in
   * `<dataDir>/instance-id`), heartbeat every `heartbeatMs`, dead (work taken over) after `leaseS`.
   */
  instance: { id: string | undefined; heartbeatMs: number; leaseS: number }
  /**
   * Limits of the HTTP server: largest header block (`SERVICE_HTTP__MAX_HEADER_BYTES`, 16 KiB → 431), most
   * header lines (`SERVICE_HTTP__MAX_HEADERS_COUNT`, 100; extra ones are dropped), time to receive the headers
   * (`SERVICE_HTTP__HEADERS_TIMEOUT_MS`, 20 s → 408) and the whole request (`SERVICE_HTTP__REQUEST_TIMEOUT_MS`,
   * 15 min: a 2 GiB upload at ~2.5 MB/s).
   */
  http: { maxHeaderBytes: number; maxHeadersCount: number; headersTimeoutMs: number; requestTimeoutMs: number }
  /**
   * `enabled` (`SERVICE_CACHE__ENABLED`, default on): live sessions and the agent registry are kept in memory
   * and dropped when the database reports a change (`src/cache/`); off, every request reads them.
   */
  cache: { enabled: boolean }
  /**
   * OpenTelemetry traces, off by default (`SERVICE_TRACING__ENABLED`): one trace per request, exported over
   * OTLP/HTTP to `SERVICE_TRACING__OTLP_ENDPOINT` (else the standard `OTEL_EXPORTER_OTLP_*` variables),
   * `service.name` from `OTEL_SERVICE_NAME` (default `pay2store-gateway`), `SERVICE_TRACING__SAMPLE_RATIO` of
   * the traces that begin here kept.
   */
  tracing: TracingSettings
  /**
   * The capability checks behind `GET /health/ready` (src/health/CapabilityMonitor.ts): every `checkIntervalMs`
   * each configured capability is checked, each check bounded by `checkTimeoutMs`.
   */
  health: { checkIntervalMs: number; checkTimeoutMs: number }
  /** `SERVICE_METRICS__TOKEN`: the bearer a scraper off loopback sends to `/metrics` (unset: loopback only). */
  metricsToken: string | undefined
  /** Express `trust proxy` (hops); 0 = use the socket address. */
  trustProxy: number
  /** Origins allowed by CORS (`*` = any). Default: the public origin. */
  corsOrigins: string[]
  catalogueLogPath: string
  /** Secret that keys the `ip_hash` of gate events; default: generated once and kept in the data dir. */
  ipHashSalt: string | undefined
  responseValidation: ResponseValidationSetting
  logLevel: string
  version: string
}

/** A non-negative integer amount in atomic units (digits only, as amounts are never floats). */
function envAtomic(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  if (!/^\d{1,30}$/.test(raw)) throw new ConfigError(name, `must be a non-negative integer (atomic units), got ${JSON.stringify(raw)}`)
  return BigInt(raw)
}

/** Parses the environment. Throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env = process.env): GatewayConfig {
  const port = envInt(env, 'SERVICE_PORT', 8000, { min: 0, max: 65535 })
  const dataDirRaw = envString(env, 'SERVICE_DATA_DIR', './data')
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(dataDirRaw)
  const databaseUrl = envString(env, 'SERVICE_DATABASE_URL', `sqlite:${join(dataDir, 'gateway.sqlite')}`)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(databaseUrl) && !/^postgres(ql)?:\/\//i.test(databaseUrl))
    throw new ConfigError('SERVICE_DATABASE_URL', `must be a postgres:// URL or a SQLite path (got "${databaseUrl}")`)
  const publicOrigin = envHttpUrl(env, 'SERVICE_PUBLIC_ORIGIN', `http://localhost:${port || 8000}`)
  if (new URL(publicOrigin).pathname !== '/' || publicOrigin !== new URL(publicOrigin).origin)
    throw new ConfigError('SERVICE_PUBLIC_ORIGIN', `must be an origin like https://example.com (no path) (got "${publicOrigin}")`)
  // Validated now so a bad value stops the start; re-read on every request afterwards.
  envBool(env, 'SERVICE_HARD_GATE_ENABLED', true)
  const hardGateEnabled = () => {
    try {
      return envBool(env, 'SERVICE_HARD_GATE_ENABLED', true)
    } catch {
      return true // a bad value at runtime fails closed
    }
  }
  strongSecret(env, 'FACILITATOR_TOKEN')
  const costCallsPerDay = envInt(env, 'SERVICE_QUOTA__COST_CALLS_PER_DAY', 100, { min: 0 })
  const modelServerUrls = envHttpUrlList(env, 'SERVICE_LLM__MODELSERVER__BASE_URL', 'http://127.0.0.1:11434')
  const config: GatewayConfig = {
    profile: readProfile(env),
    port,
    host: envString(env, 'SERVICE_HOST', '0.0.0.0'),
    dataDir,
    databaseUrl,
    sqliteSynchronous: envEnum(env, 'SERVICE_DATABASE__SQLITE_SYNCHRONOUS', ['full', 'normal'] as const, 'full'),
    publicOrigin,
    hardGateEnabled,
    modelServer: {
      baseUrl: modelServerUrls[0]!,
      baseUrls: modelServerUrls,
      chatModel: envString(env, 'SERVICE_LLM__MODELSERVER__CHAT_MODEL', 'svc-tiny-chat:latest'),
      embedModel: envString(env, 'SERVICE_LLM__MODELSERVER__EMBED_MODEL', 'svc-tiny-embed:latest'),
      timeoutMs: envInt(env, 'SERVICE_LLM__MODELSERVER__TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
      refreshMs: envInt(env, 'SERVICE_LLM__MODELSERVER__REFRESH_MS', 30_000, { min: 100, max: 3_600_000 }),
      apiKey: strongSecret(env, 'SERVICE_LLM__MODELSERVER__API_KEY'),
    },
    login: {
      challengeTtlS: envInt(env, 'SERVICE_LOGIN__CHALLENGE_TTL_S', 300, { min: 10, max: 3600 }),
      sessionTtlS: envInt(env, 'SERVICE_LOGIN__SESSION_TTL_S', 86_400, { min: 60, max: 30 * 86_400 }),
      chainId: envInt(env, 'SERVICE_LOGIN__CHAIN_ID', 1, { min: 1 }),
      statement: envString(env, 'SERVICE_LOGIN__STATEMENT', 'Sign in to the gateway. This request costs nothing.'),
      rpcUrl: loginRpcUrl(env),
    },
    quota: {
      costCallsPerDay,
      pricePerCallAtomic: envAtomic(env, 'SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC', 1_000n),
      costCallsPerNetworkPerDay: envInt(env, 'SERVICE_QUOTA__COST_CALLS_PER_NETWORK_PER_DAY', 10 * costCallsPerDay, { min: 0 }),
      networkWidth: {
        ipv4Prefix: envInt(env, 'SERVICE_QUOTA__NETWORK_IPV4_PREFIX', 24, { min: 8, max: 32 }),
        ipv6Prefix: envInt(env, 'SERVICE_QUOTA__NETWORK_IPV6_PREFIX', 48, { min: 16, max: 128 }),
      },
    },
    keepAlive: keepAliveBounds(env),
    metricsToken: strongSecret(env, 'SERVICE_METRICS__TOKEN'),
    rateLimit: {
      windowS: envInt(env, 'SERVICE_RATE_LIMIT__WINDOW_S', 60, { min: 1, max: 86_400 }),
      max: envInt(env, 'SERVICE_RATE_LIMIT__MAX', 600, { min: 1 }),
      ...rateLimitStore(env),
    },
    shutdown: shutdown(env),
    http: {
      maxHeaderBytes: envInt(env, 'SERVICE_HTTP__MAX_HEADER_BYTES', 16 * 1024, { min: 1024, max: 1024 * 1024 }),
      maxHeadersCount: envInt(env, 'SERVICE_HTTP__MAX_HEADERS_COUNT', 100, { min: 10, max: 2000 }),
      headersTimeoutMs: envInt(env, 'SERVICE_HTTP__HEADERS_TIMEOUT_MS', 20_000, { min: 1000, max: 600_000 }),
      requestTimeoutMs: envInt(env, 'SERVICE_HTTP__REQUEST_TIMEOUT_MS', 900_000, { min: 1000, max: 86_400_000 }),
    },
    instance: {
      id: instanceId(env),
      heartbeatMs: envInt(env, 'SERVICE_INSTANCE__HEARTBEAT_MS', 5_000, { min: 100, max: 60_000 }),
      leaseS: envInt(env, 'SERVICE_INSTANCE__LEASE_S', 20, { min: 2, max: 3_600 }),
    },
    cache: { enabled: envBool(env, 'SERVICE_CACHE__ENABLED', true) },
    health: {
      checkIntervalMs: envInt(env, 'SERVICE_HEALTH__CHECK_INTERVAL_MS', 5_000, { min: 100, max: 300_000 }),
      checkTimeoutMs: envInt(env, 'SERVICE_HEALTH__CHECK_TIMEOUT_MS', 3_000, { min: 50, max: 60_000 }),
    },
    tracing: tracing(env, VERSION),
    trustProxy: envInt(env, 'SERVICE_TRUST_PROXY', 0, { min: 0, max: 10 }),
    corsOrigins: envList(env, 'SERVICE_CORS__ORIGINS', [publicOrigin]),
    catalogueLogPath: envString(env, 'SERVICE_CATALOGUE__LOG_PATH', join(dataDir, 'catalogue.jsonl')),
    ipHashSalt: strongSecret(env, 'SERVICE_GATE__IP_HASH_SALT'),
    responseValidation: envEnum(env, 'SERVICE_HTTP__RESPONSE_VALIDATION', ['off', 'warn', 'error'] as const, 'warn'),
    logLevel: envEnum(env, 'LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    version: VERSION,
  }
  return config
}

/**
 * The secrets this gateway reads are checked once, here, at start (`SHADOW_JWT_SECRET` in `src/shadow/config.ts`,
 * which also needs its bytes): a typed passphrase or a pattern refuses start with how to make a real one. The
 * facilitator token is read again by `src/x402/config.ts`; checking it here stops the process before anything runs.
 */
function strongSecret(env: Env, name: string): string | undefined {
  const value = envOptionalString(env, name)
  if (value === undefined) return undefined
  const problem = weakSecretProblem(value)
  if (problem) throw new ConfigError(name, `${problem}: it must be random; ${HOW_TO_MAKE_A_SECRET}.`)
  return value
}

/**
 * The login RPC decides every signature ECDSA does not (smart-contract wallets), so whoever answers it can log in
 * as any wallet: it must be reached over `https`, or on this machine (loopback: a local node).
 */
function loginRpcUrl(env: Env): string | undefined {
  if (envOptionalString(env, 'SERVICE_LOGIN__RPC_URL') === undefined) return undefined
  const url = envHttpUrl(env, 'SERVICE_LOGIN__RPC_URL', '')
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  if (new URL(url).protocol !== 'https:' && !loopback) {
    throw new ConfigError('SERVICE_LOGIN__RPC_URL', 'must be https unless it is on this machine (it decides smart-wallet logins, so an http answer from the network could log anyone in)')
  }
  return url
}

function keepAliveBounds(env: Env): { minS: number; maxS: number } {
  const minS = envInt(env, 'SERVICE_LLM__KEEP_ALIVE_MIN_S', 60, { min: 0, max: 86_400 })
  const maxS = envInt(env, 'SERVICE_LLM__KEEP_ALIVE_MAX_S', 1800, { min: 0, max: 86_400 })
  if (maxS < minS) throw new ConfigError('SERVICE_LLM__KEEP_ALIVE_MAX_S', `must be at least SERVICE_LLM__KEEP_ALIVE_MIN_S (${minS})`)
  return { minS, maxS }
}

/** The rate-limit store and, for `redis`, its server (`redis://` or `rediss://`; a password stays in the URL only). */
function rateLimitStore(env: Env): Pick<GatewayConfig['rateLimit'], 'store' | 'redis'> {
  const url = envOptionalString(env, 'SERVICE_RATE_LIMIT__REDIS_URL')
  const store = envEnum(env, 'SERVICE_RATE_LIMIT__STORE', ['memory', 'database', 'redis'] as const, url === undefined ? 'memory' : 'redis')
  if (store !== 'redis') return { store, redis: undefined }
  if (url === undefined) throw new ConfigError('SERVICE_RATE_LIMIT__REDIS_URL', 'must be set when SERVICE_RATE_LIMIT__STORE=redis (e.g. redis://127.0.0.1:6379)')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError('SERVICE_RATE_LIMIT__REDIS_URL', 'must be a redis:// or rediss:// URL')
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new ConfigError('SERVICE_RATE_LIMIT__REDIS_URL', `must be a redis:// or rediss:// URL (got ${parsed.protocol})`)
  return {
    store,
    redis: {
      url,
      prefix: envString(env, 'SERVICE_RATE_LIMIT__REDIS_PREFIX', 'p2s:rl:'),
      timeoutMs: envInt(env, 'SERVICE_RATE_LIMIT__REDIS_TIMEOUT_MS', 250, { min: 10, max: 10_000 }),
    },
  }
}

function shutdown(env: Env): GatewayConfig['shutdown'] {
  const deadlineMs = envInt(env, 'SERVICE_SHUTDOWN__DEADLINE_MS', 25_000, { min: 0, max: 3_600_000 })
  const drainDelayMs = envInt(env, 'SERVICE_SHUTDOWN__DRAIN_DELAY_MS', 0, { min: 0, max: 600_000 })
  if (drainDelayMs > deadlineMs) throw new ConfigError('SERVICE_SHUTDOWN__DRAIN_DELAY_MS', `must not exceed SERVICE_SHUTDOWN__DEADLINE_MS (${deadlineMs})`)
  const quietMs = envInt(env, 'SERVICE_SHUTDOWN__QUIET_MS', 0, { min: 0, max: 60_000 })
  if (drainDelayMs + quietMs > deadlineMs) throw new ConfigError('SERVICE_SHUTDOWN__QUIET_MS', `with the drain delay must not exceed SERVICE_SHUTDOWN__DEADLINE_MS (${deadlineMs})`)
  return { drainDelayMs, quietMs, deadlineMs }
}

function tracing(env: Env, version: string): TracingSettings {
  const enabled = envBool(env, 'SERVICE_TRACING__ENABLED', false)
  const ratio = envOptionalString(env, 'SERVICE_TRACING__SAMPLE_RATIO')
  if (ratio !== undefined && !(/^\d*\.?\d+$/.test(ratio) && Number(ratio) <= 1))
    throw new ConfigError('SERVICE_TRACING__SAMPLE_RATIO', `must be a number from 0 to 1 (got "${ratio}")`)
  const { url, variable, valid } = otlpTracesUrl(env, 'SERVICE_TRACING__OTLP_ENDPOINT')
  // checked only when it will be used: a deployment with traces off may carry any OTEL_* of another program
  if (enabled && !valid) throw new ConfigError(variable, `must be an http(s) URL of an OTLP/HTTP collector (got "${url}")`)
  return {
    enabled,
    serviceName: envString(env, 'OTEL_SERVICE_NAME', 'pay2store-gateway'),
    serviceVersion: version,
    otlpTracesUrl: url,
    sampleRatio: ratio === undefined ? 1 : Number(ratio),
  }
}

function instanceId(env: Env): string | undefined {
  const id = envOptionalString(env, 'SERVICE_INSTANCE_ID')
  if (id !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(id))
    throw new ConfigError('SERVICE_INSTANCE_ID', `must be 1–128 characters of A–Z a–z 0–9 . _ : - (got "${id}")`)
  return id
}
