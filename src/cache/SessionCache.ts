import type { ChangeFeed } from './ChangeFeed.js'
import { FeedGuard } from './FeedGuard.js'

/** A live session as cached: the checksummed wallet and the expiry (epoch seconds). */
export type CachedSession = { readonly wallet: string; readonly expires_at: number }

export type SessionCacheParameters = {
  feed: ChangeFeed
  /** Most entries kept; the oldest inserted is dropped beyond it. Default 10,000. */
  max?: number
  onEvent?: ((event: 'hit' | 'miss' | 'invalidation') => void) | undefined
}

/**
 * Live sessions by token hash, so a gated request needs no session round trip. Positive entries
 * only (an unknown or revoked token always goes to the database); the caller checks `expires_at` against its
 * clock on every hit. An entry is dropped when its row changes (a revocation, cleanup) as the change feed
 * reports it, and everything is dropped — and nothing is answered from memory — while the feed is not live.
 *
 * Race guard: a lookup takes `epoch()` before reading the database and `store`s with it; any invalidation in
 * between moves the epoch and the result is not kept (it may have been read before the revocation).
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession>()
  private readonly max: number
  private readonly guard: FeedGuard

  constructor(private readonly p: SessionCacheParameters) {
    this.max = p.max ?? 10_000
    this.guard = new FeedGuard(p.feed, (change) => {
      if (change.kind === 'all') this.clear()
      else if (change.table === 'sessions') this.invalidate(change.key === '*' ? undefined : change.key)
    })
  }

  get size(): number {
    return this.entries.size
  }

  /** The cached session of `tokenHash`, or `undefined` (not cached, or the feed is not live). */
  get(tokenHash: string): CachedSession | undefined {
    if (!this.guard.usable) return undefined
    const entry = this.entries.get(tokenHash)
    this.p.onEvent?.(entry ? 'hit' : 'miss')
    return entry
  }

  /** Taken before a database lookup whose result may be `store`d. */
  epoch(): number {
    return this.guard.epoch
  }

  /** Keeps a live session read after `epoch`, unless something was invalidated since. */
  store(tokenHash: string, session: CachedSession, epoch: number): void {
    if (!this.guard.keeps(epoch)) return
    this.entries.delete(tokenHash)
    this.entries.set(tokenHash, Object.freeze({ wallet: session.wallet, expires_at: session.expires_at }))
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!)
  }

  /** Drops one session (a revocation on this instance: before its response is sent), or every one. */
  invalidate(tokenHash?: string): void {
    if (tokenHash === undefined) this.clear()
    else {
      this.guard.dropped()
      this.entries.delete(tokenHash)
    }
    this.p.onEvent?.('invalidation')
  }

  /** Stops following changes and is no longer used. */
  close(): void {
    this.guard.close()
  }

  private clear(): void {
    this.guard.dropped()
    this.entries.clear()
  }
}
