import { Redis } from 'ioredis'
import { RedisStore } from 'rate-limit-redis'
import type { RateLimitHit, RateLimitStore } from './MemoryRateLimitStore.js'

export type RedisRateLimitStoreOptions = {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  url: string
  /** Prefix of every counter's key, so deployments (and tests) sharing one Redis keep apart. */
  prefix: string
  /** A command that has not answered in this long fails (and the caller falls back). */
  commandTimeoutMs: number
  /** Told of connection errors (throttled by the caller's logger level); never of a key or a password. */
  onError?: (error: Error) => void
}

/**
 * The rate limit's counters in Redis (`SERVICE_RATE_LIMIT__STORE=redis`), shared by every replica on it: the
 * counting is `rate-limit-redis`'s (express-rate-limit's Redis store: one Lua script per hit, `SET … PX` for a
 * new window, `INCR` within it, so replicas racing on one address never lose a hit) on an `ioredis` client.
 *
 * The client never queues a command while disconnected and bounds every command (`commandTimeoutMs`): with
 * Redis down a hit fails at once instead of waiting, and `FallbackRateLimitStore` counts it elsewhere.
 * The store's scripts are loaded (`SCRIPT LOAD`) on first use and again after any failure, because
 * rate-limit-redis keeps the promise of its first load: a load made while Redis was down would fail every
 * later hit even after Redis is back.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #client: Redis
  readonly #store: RedisStore
  #loaded: Promise<void> | undefined
  #windowMs: number | undefined

  constructor({ url, prefix, commandTimeoutMs, onError }: RedisRateLimitStoreOptions) {
    this.#client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      connectTimeout: Math.max(1000, commandTimeoutMs),
      // reconnect in the background, at most every 2 s, for as long as the process runs
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    })
    // ioredis prints unhandled 'error' events to the console; they go to the caller's logger instead
    this.#client.on('error', (error: Error) => onError?.(error))
    this.#store = new RedisStore({
      prefix,
      sendCommand: (command: string, ...args: string[]) => this.#client.call(command, ...args) as Promise<never>,
    })
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    if (this.#loaded === undefined || this.#windowMs !== windowMs) {
      this.#windowMs = windowMs
      this.#loaded = this.#store.init({ windowMs } as Parameters<RedisStore['init']>[0])
    }
    try {
      await this.#loaded
      const { totalHits, resetTime } = await this.#store.increment(key)
      return { count: totalHits, resetAtMs: resetTime?.getTime() ?? Date.now() + windowMs }
    } catch (error) {
      this.#loaded = undefined // load the scripts again on the next hit
      throw error
    }
  }

  /** Resolves once connected, or after `timeoutMs` (the start does not wait longer for Redis: hits fall back). */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.connected) return true
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer)
        this.#client.off('ready', onReady)
        resolve(ok)
      }
      const onReady = () => done(true)
      const timer = setTimeout(() => done(false), timeoutMs)
      this.#client.on('ready', onReady)
    })
  }

  /** Whether the client is connected now (for logs and tests). */
  get connected(): boolean {
    return this.#client.status === 'ready'
  }

  async close(): Promise<void> {
    this.#client.disconnect(false)
  }
}
