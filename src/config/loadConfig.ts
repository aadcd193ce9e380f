import { isAbsolute, join, resolve } from 'node:path'
import { HOW_TO_MAKE_A_SECRET, weakSecretProblem } from '../shared/assessSecret.js'
import { ConfigError } from './ConfigError.js'
import { type Env, envBool, envEnum, envHttpUrl, envHttpUrlList, envInt, envList, envOptionalString, envString } from './env.js'

export type ResponseValidationSetting = 'off' | 'warn' | 'error'

/** The gateway core's configuration. Other domains read their own sections (`src/<domain>/config.ts`). */
export type GatewayConfig = {
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
   * (atomic units of the 6-decimal USDC; 0 turns paying off).
   */
  quota: { costCallsPerDay: number; pricePerCallAtomic: bigint }
  /**
   * `store`: where the counters live — `memory` (this process; one instance) or `database` (the gateway's
   * database, shared by every instance on it).
   */
  rateLimit: { windowS: number; max: number; store: 'memory' | 'database' }
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
  const modelServerUrls = envHttpUrlList(env, 'SERVICE_LLM__MODELSERVER__BASE_URL', 'http://127.0.0.1:11434')
  const config: GatewayConfig = {
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
      costCallsPerDay: envInt(env, 'SERVICE_QUOTA__COST_CALLS_PER_DAY', 100, { min: 0 }),
      pricePerCallAtomic: envAtomic(env, 'SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC', 1_000n),
    },
    rateLimit: {
      windowS: envInt(env, 'SERVICE_RATE_LIMIT__WINDOW_S', 60, { min: 1, max: 86_400 }),
      max: envInt(env, 'SERVICE_RATE_LIMIT__MAX', 600, { min: 1 }),
      store: envEnum(env, 'SERVICE_RATE_LIMIT__STORE', ['memory', 'database'] as const, 'memory'),
    },
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
    trustProxy: envInt(env, 'SERVICE_TRUST_PROXY', 0, { min: 0, max: 10 }),
    corsOrigins: envList(env, 'SERVICE_CORS__ORIGINS', [publicOrigin]),
    catalogueLogPath: envString(env, 'SERVICE_CATALOGUE__LOG_PATH', join(dataDir, 'catalogue.jsonl')),
    ipHashSalt: strongSecret(env, 'SERVICE_GATE__IP_HASH_SALT'),
    responseValidation: envEnum(env, 'SERVICE_HTTP__RESPONSE_VALIDATION', ['off', 'warn', 'error'] as const, 'warn'),
    logLevel: envEnum(env, 'LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    version: '1.0.0',
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

function instanceId(env: Env): string | undefined {
  const id = envOptionalString(env, 'SERVICE_INSTANCE_ID')
  if (id !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(id))
    throw new ConfigError('SERVICE_INSTANCE_ID', `must be 1–128 characters of A–Z a–z 0–9 . _ : - (got "${id}")`)
  return id
}
