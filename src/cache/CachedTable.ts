import type { ChangeFeed } from './ChangeFeed.js'
import { FeedGuard } from './FeedGuard.js'

export type CachedTableParameters<T> = {
  feed: ChangeFeed
  /** The table whose every change drops the value. */
  table: string
  /** Reads the value from the database. */
  load: () => Promise<T>
  onEvent?: ((event: 'hit' | 'miss' | 'invalidation') => void) | undefined
}

/**
 * One value derived from a whole table (the agent registry: every agent's current revision), read once and
 * kept until the change feed reports any change to the table. While the feed is not live every
 * call reads the database. Race guard as in `SessionCache`: a read during which the table changed is
 * returned to its caller but not kept.
 */
export class CachedTable<T> {
  private value: { v: T } | undefined
  private readonly guard: FeedGuard

  constructor(private readonly p: CachedTableParameters<T>) {
    this.guard = new FeedGuard(p.feed, (change) => {
      if (change.kind === 'all') this.drop()
      else if (change.table === p.table) this.invalidate()
    })
  }

  async get(): Promise<T> {
    if (!this.guard.usable) return this.p.load()
    if (this.value) {
      this.p.onEvent?.('hit')
      return this.value.v
    }
    this.p.onEvent?.('miss')
    const epoch = this.guard.epoch
    const v = await this.p.load()
    if (this.guard.keeps(epoch)) this.value = { v }
    return v
  }

  /** Drops the value (a write on this instance: before its response is sent). */
  invalidate(): void {
    this.drop()
    this.p.onEvent?.('invalidation')
  }

  /** Stops following changes and is no longer used. */
  close(): void {
    this.guard.close()
  }

  private drop(): void {
    this.guard.dropped()
    this.value = undefined
  }
}
