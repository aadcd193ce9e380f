import { join, resolve } from 'node:path'
import { ConfigError } from '../config/ConfigError.js'
import { type Env, envBool, envEnum, envHttpUrl, envInt, envOptionalString, envString } from '../config/env.js'
import type { S3SpoolConfig } from './spool/S3SpoolStore.js'

/**
 * Configuration of paid storage (seed 4.6, 4.7), from `SERVICE_STORAGE__*`:
 * - `SERVICE_STORAGE__PAYMENT_URL`, `SERVICE_STORAGE__UPLOAD_URL`, `SERVICE_STORAGE__GATEWAY_URL`;
 * - `SERVICE_STORAGE__ARWEAVE_JWK_PATH` (default `<SERVICE_DATA_DIR>/arweave-jwk.json`);
 * - `SERVICE_STORAGE__MAX_UPLOAD_BYTES` (default 2 GiB; above it → 413);
 * - `SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE` (`1`/`true`: answer 202 with a queue id instead of 502);
 * - `SERVICE_STORAGE__APP_NAME` (the `App-Name` tag when `X-SVC-Tag-App` is absent; default `pay2store`);
 * - `SERVICE_STORAGE__VERIFY_INTERVAL_MS` (5000), `SERVICE_STORAGE__RETRY_INTERVAL_MS` (5000, doubled per
 *   failed attempt up to 5 min), `SERVICE_STORAGE__WORKER_TICK_MS` (1000);
 * - `SERVICE_STORAGE__SPOOL_DIR` (default `<SERVICE_DATA_DIR>/storage`): temp files of uploads being received;
 * - paid-but-unstored bytes (docs/reliability.md), where every replica reads them so any of them can finish an
 *   upload another was sending when it died: up to `SERVICE_STORAGE__DB_SPOOL_MAX_BYTES` (4 MiB; 0 = never)
 *   as one database row (`storage_spool`), larger ones in `SERVICE_STORAGE__SPOOL_STORE`:
 *   `postgres` (chunked rows, the default when the database is PostgreSQL), `s3` (an S3-compatible bucket:
 *   `SERVICE_STORAGE__S3_BUCKET` (required), `…_S3_ENDPOINT` (unset = AWS), `…_S3_REGION` (`us-east-1`),
 *   `…_S3_PREFIX` (`spool/`), `…_S3_FORCE_PATH_STYLE` (default on with an endpoint), `…_S3_ACCESS_KEY_ID` +
 *   `…_S3_SECRET_ACCESS_KEY` (both or neither; neither = the SDK's chain; never logged)) or `local` (the
 *   default on SQLite): `SERVICE_STORAGE__SHARED_SPOOL_DIR` (default `<SPOOL_DIR>/paid`) — shared between
 *   replicas only if every one mounts it at that path;
 * - `SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS` (16): `POST /store` requests one instance receives at once; beyond
 *   it 503 `too_many_uploads` with `Retry-After` (`SERVICE_STORAGE__BUSY_RETRY_AFTER_S`, 5);
 * - `SERVICE_STORAGE__UPSTREAM_TIMEOUT_MS` (120000): longest upstream upload call (reads: 15 s);
 * - quotes: `SERVICE_STORAGE__QUOTE_VALIDITY_S` (300): how long a quoted price is honoured (`GET /store/quote`,
 *   every 402) even when the upstream's rates move; `SERVICE_STORAGE__RATE_CACHE_MS` (30000): how long one
 *   reading of the upstream's rates is reused (0 = every price reads them) — a rise reaches the price only then;
 * - upstream credit (seed 4.7): `SERVICE_STORAGE__CREDIT_LOW_WINC` (10¹² winc): below it the balance is low
 *   (catalogue event `storage.upstream.credit_low`, automatic top-up); `SERVICE_STORAGE__CREDIT_CHECK_INTERVAL_MS`
 *   (60000); automatic top-up from the service's own funds when `SERVICE_STORAGE__TOPUP_KEY` is set (an EVM key
 *   holding the rail's USDC; never logged): `SERVICE_STORAGE__TOPUP_RPC_URL` (`http://127.0.0.1:8545`),
 *   `SERVICE_STORAGE__TOPUP_CURRENCY` (`base-usdc`, the upstream's name of the rail),
 *   `SERVICE_STORAGE__TOPUP_TOKEN` (default `SERVICE_X402__ASSET__EIP155_8453`), `SERVICE_STORAGE__TOPUP_AMOUNT_ATOMIC`
 *   (10000000 = 10 USDC per top-up), `SERVICE_STORAGE__TOPUP_DEPOSIT_ADDRESS` (default: the upstream's `/v1/info`);
 * - on-chain attestation of verified uploads (StorageAttest, seed 4.8), on when `SERVICE_STORAGE__ATTESTOR_KEY`
 *   is set: `SERVICE_STORAGE__ATTESTOR_KEY` (the storer: signs the EIP-712 `Attest` and sends it, so it needs
 *   gas; never logged), `SERVICE_STORAGE__ATTEST_RPC_URL` (default `http://127.0.0.1:8545`, the devnet's
 *   chain 8453), `SERVICE_STORAGE__ATTEST_CONTRACT` (default: `storageAttest` of
 *   `<SERVICE_DATA_DIR>/contracts-<chainId>.json`, written by `contracts/deploy.ts`, read when attesting);
 * - intake before payment (`src/storage/intake/`), every bound with its default:
 *   `SERVICE_STORAGE__UNPAID_MAX_BYTES` (default `MAX_UPLOAD_BYTES`): longest body read for a request without a
 *   payment (it is hashed and counted, never written to disk) → 413 `unpaid_body_too_large`;
 *   `SERVICE_STORAGE__UNPAID_PER_ADDRESS` (4): `POST /store` requests one client address (IPv6: its /56) may
 *   have in intake at once (before their body is received) → 429 `too_many_unpaid_requests`;
 *   `SERVICE_STORAGE__MIN_RECEIVE_BYTES_PER_S` (8192) over windows of `SERVICE_STORAGE__MIN_RATE_WINDOW_S` (10):
 *   a sender below it is answered 408 `upload_too_slow` and cut; `SERVICE_STORAGE__MULTIPART_MAX_PARTS` (8)
 *   → 413 `multipart_too_many_parts`; `SERVICE_STORAGE__MULTIPART_MAX_FIELD_BYTES` (8192, a non-file field)
 *   → 413 `multipart_field_too_large`; `SERVICE_STORAGE__ALGORAND_CHECKS_PER_ADDRESS` (2): Algorand payments
 *   one address may have looked up at once → 429 `too_many_payment_checks`;
 *   `SERVICE_STORAGE__ALGORAND_UNKNOWN_TX_MS` (6000): how long a `txId` the node does not know is looked for
 *   before 402 `expired_payment`; an early answer drains up to `SERVICE_STORAGE__EARLY_DRAIN_MAX_BYTES`
 *   (128 MiB, or `UNPAID_MAX_BYTES` if lower) of unread body, beyond it closes the connection after lingering
 *   `SERVICE_STORAGE__LINGER_MS` (2000); `SERVICE_STORAGE__UNVERIFIED_UPLOADS` (2): uploads whose payer could not
 *   be verified before its slot (the chain or node did not answer) share this many slots of their own;
 *   `SERVICE_STORAGE__PAYER_CHECK_CACHE_MS` (3000): how long a payer's balance or nonce read is reused.
 *   Draining is what a client still sending needs to read the answer for sure: undici, for one, reads it only
 *   once its body is sent or the connection breaks, and a close with its bytes unread is a reset that, on a
 *   loaded machine, beat the answer ("fetch failed"; 1 MiB was the default before 2026-11-27). It costs no
 *   more than a request without a payment, whose body is read whole.
 */
export type StorageConfig = {
  publicOrigin: string
  paymentUrl: string
  uploadUrl: string
  gatewayUrl: string
  arweaveJwkPath: string
  maxUploadBytes: bigint
  queueOnUpstreamFailure: boolean
  appName: string
  verifyIntervalMs: number
  retryIntervalMs: number
  workerTickMs: number
  spoolDir: string
  sharedSpoolDir: string
  dbSpoolMaxBytes: number
  /** Where large paid bytes wait; `auto`: `postgres` on PostgreSQL, `local` on SQLite. */
  spoolStore: SpoolStoreChoice
  /** Set when `spoolStore` is `s3`. */
  s3: S3SpoolConfig | undefined
  maxConcurrentUploads: number
  busyRetryAfterS: number
  upstreamTimeoutMs: number
  /** Attestation of verified uploads; undefined when `SERVICE_STORAGE__ATTESTOR_KEY` is unset. */
  attest: StorageAttestConfig | undefined
  quoteValiditySeconds: number
  /** How long one reading of the upstream's prices is reused (ms; 0 = read for every price). */
  rateCacheMs: number
  creditLowWinc: bigint
  creditCheckIntervalMs: number
  /** Automatic top-up of the upstream credit; undefined when `SERVICE_STORAGE__TOPUP_KEY` is unset. */
  topUp: TopUpConfig | undefined
  /** Bounds on everything a request costs before its payment is checked (`src/storage/intake/`). */
  intake: IntakeLimits
}

export type SpoolStoreChoice = 'auto' | 'local' | 'postgres' | 's3'

export type IntakeLimits = {
  unpaidMaxBytes: bigint
  unpaidPerAddress: number
  minBytesPerSecond: number
  minRateWindowMs: number
  maxParts: number
  maxFieldBytes: number
  algorandChecksPerAddress: number
  algorandUnknownTxMs: number
  earlyDrainMaxBytes: number
  lingerMs: number
  /** Upload slots for payers that could not be verified before their slot (a pool apart from the others). */
  unverifiedUploads: number
  /** How long a payer's balance or nonce read (chain, node) is reused, ms. */
  payerCheckCacheMs: number
}

export type TopUpConfig = {
  key: `0x${string}`
  rpcUrl: string
  /** The upstream's currency name of the rail (`base-usdc`). */
  currency: string
  /** The token sent (USDC on the rail's chain). */
  token: `0x${string}`
  amountAtomic: bigint
  /** Where the token is sent; undefined → the upstream's `/v1/info` `addresses.ethereum`. */
  depositAddress: `0x${string}` | undefined
}

export type StorageAttestConfig = {
  rpcUrl: string
  attestorKey: `0x${string}`
  /** The StorageAttest address; undefined → read from `<deploymentsDir>/contracts-<chainId>.json`. */
  contract: `0x${string}` | undefined
  deploymentsDir: string
}

export function readStorageConfig(env: Env = process.env): StorageConfig {
  const dataDir = envString(env, 'SERVICE_DATA_DIR', 'data')
  const maxText = envString(env, 'SERVICE_STORAGE__MAX_UPLOAD_BYTES', String(2 * 1024 ** 3))
  if (!/^\d+$/.test(maxText) || BigInt(maxText) === 0n) throw new ConfigError('SERVICE_STORAGE__MAX_UPLOAD_BYTES', 'must be a positive integer')
  const positive = (name: string, fallback: number) => envInt(env, name, fallback, { min: 1, max: Number.MAX_SAFE_INTEGER })
  const spoolDir = envString(env, 'SERVICE_STORAGE__SPOOL_DIR', join(dataDir, 'storage'))
  return {
    publicOrigin: envString(env, 'SERVICE_PUBLIC_ORIGIN', `http://localhost:${envString(env, 'SERVICE_PORT', '8000')}`).replace(/\/+$/, ''),
    paymentUrl: envString(env, 'SERVICE_STORAGE__PAYMENT_URL', 'http://127.0.0.1:8403'),
    uploadUrl: envString(env, 'SERVICE_STORAGE__UPLOAD_URL', 'http://127.0.0.1:8403'),
    gatewayUrl: envString(env, 'SERVICE_STORAGE__GATEWAY_URL', 'http://127.0.0.1:8404'),
    arweaveJwkPath: envString(env, 'SERVICE_STORAGE__ARWEAVE_JWK_PATH', join(dataDir, 'arweave-jwk.json')),
    maxUploadBytes: BigInt(maxText),
    // any other value is off (not an error), as before
    queueOnUpstreamFailure: /^(1|true|yes|on)$/i.test(envString(env, 'SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE', '')),
    appName: envString(env, 'SERVICE_STORAGE__APP_NAME', 'pay2store'),
    verifyIntervalMs: positive('SERVICE_STORAGE__VERIFY_INTERVAL_MS', 5_000),
    retryIntervalMs: positive('SERVICE_STORAGE__RETRY_INTERVAL_MS', 5_000),
    workerTickMs: positive('SERVICE_STORAGE__WORKER_TICK_MS', 1_000),
    spoolDir,
    sharedSpoolDir: resolve(envString(env, 'SERVICE_STORAGE__SHARED_SPOOL_DIR', join(spoolDir, 'paid'))),
    dbSpoolMaxBytes: envInt(env, 'SERVICE_STORAGE__DB_SPOOL_MAX_BYTES', 4 * 1024 ** 2, { min: 0, max: 64 * 1024 ** 2 }),
    ...readSpoolStore(env),
    maxConcurrentUploads: positive('SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS', 16),
    busyRetryAfterS: positive('SERVICE_STORAGE__BUSY_RETRY_AFTER_S', 5),
    upstreamTimeoutMs: positive('SERVICE_STORAGE__UPSTREAM_TIMEOUT_MS', 120_000),
    attest: readAttestConfig(env, dataDir),
    quoteValiditySeconds: positive('SERVICE_STORAGE__QUOTE_VALIDITY_S', 300),
    rateCacheMs: envInt(env, 'SERVICE_STORAGE__RATE_CACHE_MS', 30_000, { min: 0, max: 3_600_000 }),
    creditLowWinc: bigintSetting(env, 'SERVICE_STORAGE__CREDIT_LOW_WINC', 10n ** 12n),
    creditCheckIntervalMs: positive('SERVICE_STORAGE__CREDIT_CHECK_INTERVAL_MS', 60_000),
    topUp: readTopUpConfig(env),
    intake: readIntakeLimits(env, BigInt(maxText)),
  }
}

function readIntakeLimits(env: Env, maxUploadBytes: bigint): IntakeLimits {
  const positive = (name: string, fallback: number, max = Number.MAX_SAFE_INTEGER) => envInt(env, name, fallback, { min: 1, max })
  const unpaid = bigintSetting(env, 'SERVICE_STORAGE__UNPAID_MAX_BYTES', maxUploadBytes)
  if (unpaid === 0n) throw new ConfigError('SERVICE_STORAGE__UNPAID_MAX_BYTES', 'must be positive')
  const unpaidMaxBytes = unpaid < maxUploadBytes ? unpaid : maxUploadBytes
  return {
    // above the upload limit it would never apply: the upload limit answers first
    unpaidMaxBytes,
    unpaidPerAddress: positive('SERVICE_STORAGE__UNPAID_PER_ADDRESS', 4, 10_000),
    minBytesPerSecond: envInt(env, 'SERVICE_STORAGE__MIN_RECEIVE_BYTES_PER_S', 8192, { min: 0, max: 1024 ** 3 }),
    minRateWindowMs: positive('SERVICE_STORAGE__MIN_RATE_WINDOW_S', 10, 3600) * 1000,
    maxParts: positive('SERVICE_STORAGE__MULTIPART_MAX_PARTS', 8, 1000),
    maxFieldBytes: positive('SERVICE_STORAGE__MULTIPART_MAX_FIELD_BYTES', 8192, 16 * 1024 ** 2),
    algorandChecksPerAddress: positive('SERVICE_STORAGE__ALGORAND_CHECKS_PER_ADDRESS', 2, 1000),
    algorandUnknownTxMs: positive('SERVICE_STORAGE__ALGORAND_UNKNOWN_TX_MS', 6000, 120_000),
    earlyDrainMaxBytes: envInt(env, 'SERVICE_STORAGE__EARLY_DRAIN_MAX_BYTES', Math.min(128 * 1024 ** 2, Number(unpaidMaxBytes)), { min: 0, max: 1024 ** 3 }),
    lingerMs: positive('SERVICE_STORAGE__LINGER_MS', 2000, 60_000),
    unverifiedUploads: envInt(env, 'SERVICE_STORAGE__UNVERIFIED_UPLOADS', 2, { min: 0, max: 10_000 }),
    payerCheckCacheMs: envInt(env, 'SERVICE_STORAGE__PAYER_CHECK_CACHE_MS', 3000, { min: 0, max: 60_000 }),
  }
}

const SPOOL_STORES: readonly SpoolStoreChoice[] = ['auto', 'local', 'postgres', 's3']

function readSpoolStore(env: Env): { spoolStore: SpoolStoreChoice; s3: S3SpoolConfig | undefined } {
  const choice = envEnum(env, 'SERVICE_STORAGE__SPOOL_STORE', SPOOL_STORES, 'auto')
  if (choice !== 's3') return { spoolStore: choice, s3: undefined }
  const bucket = envOptionalString(env, 'SERVICE_STORAGE__S3_BUCKET')
  if (bucket === undefined || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError('SERVICE_STORAGE__S3_BUCKET', 'must name the bucket (3-63 lowercase letters, digits, dots, hyphens) when SERVICE_STORAGE__SPOOL_STORE=s3')
  }
  const endpoint = envOptionalString(env, 'SERVICE_STORAGE__S3_ENDPOINT') === undefined ? undefined : envHttpUrl(env, 'SERVICE_STORAGE__S3_ENDPOINT', '')
  const accessKeyId = envOptionalString(env, 'SERVICE_STORAGE__S3_ACCESS_KEY_ID')
  const secretAccessKey = envOptionalString(env, 'SERVICE_STORAGE__S3_SECRET_ACCESS_KEY')
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('SERVICE_STORAGE__S3_SECRET_ACCESS_KEY', 'set both SERVICE_STORAGE__S3_ACCESS_KEY_ID and SERVICE_STORAGE__S3_SECRET_ACCESS_KEY, or neither')
  }
  return {
    spoolStore: 's3',
    s3: {
      bucket,
      prefix: envString(env, 'SERVICE_STORAGE__S3_PREFIX', 'spool/'),
      region: envString(env, 'SERVICE_STORAGE__S3_REGION', 'us-east-1'),
      endpoint,
      // S3-compatible servers mostly answer only path-style requests (no per-bucket DNS names)
      forcePathStyle: envBool(env, 'SERVICE_STORAGE__S3_FORCE_PATH_STYLE', endpoint !== undefined),
      accessKeyId,
      secretAccessKey,
    },
  }
}

function bigintSetting(env: Env, name: string, fallback: bigint): bigint {
  const text = envString(env, name, fallback.toString())
  if (!/^\d{1,40}$/.test(text)) throw new ConfigError(name, 'must be a non-negative integer')
  return BigInt(text)
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

function readTopUpConfig(env: Env): TopUpConfig | undefined {
  const key = envOptionalString(env, 'SERVICE_STORAGE__TOPUP_KEY')
  if (key === undefined) return undefined
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ConfigError('SERVICE_STORAGE__TOPUP_KEY', 'must be a 0x-prefixed 32-byte hex key')
  const token = envString(env, 'SERVICE_STORAGE__TOPUP_TOKEN', envString(env, 'SERVICE_X402__ASSET__EIP155_8453', ''))
  if (!ADDRESS.test(token)) throw new ConfigError('SERVICE_STORAGE__TOPUP_TOKEN', 'must be the USDC address (or set SERVICE_X402__ASSET__EIP155_8453)')
  const deposit = envOptionalString(env, 'SERVICE_STORAGE__TOPUP_DEPOSIT_ADDRESS')
  if (deposit !== undefined && !ADDRESS.test(deposit)) throw new ConfigError('SERVICE_STORAGE__TOPUP_DEPOSIT_ADDRESS', 'must be an address')
  const amount = bigintSetting(env, 'SERVICE_STORAGE__TOPUP_AMOUNT_ATOMIC', 10_000_000n)
  if (amount === 0n) throw new ConfigError('SERVICE_STORAGE__TOPUP_AMOUNT_ATOMIC', 'must be positive')
  return {
    key: key as `0x${string}`,
    rpcUrl: envHttpUrl(env, 'SERVICE_STORAGE__TOPUP_RPC_URL', 'http://127.0.0.1:8545'),
    currency: envString(env, 'SERVICE_STORAGE__TOPUP_CURRENCY', 'base-usdc'),
    token: token as `0x${string}`,
    amountAtomic: amount,
    depositAddress: deposit as `0x${string}` | undefined,
  }
}

function readAttestConfig(env: Env, dataDir: string): StorageAttestConfig | undefined {
  const key = envOptionalString(env, 'SERVICE_STORAGE__ATTESTOR_KEY')
  if (key === undefined) return undefined
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ConfigError('SERVICE_STORAGE__ATTESTOR_KEY', 'must be a 0x-prefixed 32-byte hex key')
  const contract = envOptionalString(env, 'SERVICE_STORAGE__ATTEST_CONTRACT')
  if (contract !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(contract)) {
    throw new ConfigError('SERVICE_STORAGE__ATTEST_CONTRACT', `must be an address (got "${contract}")`)
  }
  return {
    rpcUrl: envHttpUrl(env, 'SERVICE_STORAGE__ATTEST_RPC_URL', 'http://127.0.0.1:8545'),
    attestorKey: key as `0x${string}`,
    contract: contract as `0x${string}` | undefined,
    deploymentsDir: resolve(dataDir),
  }
}
