import type { ChangeFeed } from './ChangeFeed.js'

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
 * kept until the change feed reports any change to the table (issue 17). While the feed is not live every
 * call reads the database. Race guard as in `SessionCache`: a read during which the table changed is
 * returned to its caller but not kept.
 */
export class CachedTable<T> {
  private value: { v: T } | undefined
  private generation = 0
  private readonly unsubscribe: () => void
  private closed = false

  constructor(private readonly p: CachedTableParameters<T>) {
    this.unsubscribe = p.feed.subscribe((change) => {
      if (change.kind === 'all') this.drop()
      else if (change.table === p.table) this.invalidate()
    })
  }

  async get(): Promise<T> {
    if (this.closed || !this.p.feed.live()) return this.p.load()
    if (this.value) {
      this.p.onEvent?.('hit')
      return this.value.v
    }
    this.p.onEvent?.('miss')
    const epoch = this.generation
    const v = await this.p.load()
    // `live()` first: it may itself report a change (and move the epoch).
    if (!this.closed && this.p.feed.live() && epoch === this.generation) this.value = { v }
    return v
  }

  /** Drops the value (a write on this instance: before its response is sent). */
  invalidate(): void {
    this.drop()
    this.p.onEvent?.('invalidation')
  }

  /** Stops following changes and is no longer used. */
  close(): void {
    this.unsubscribe()
    this.closed = true
  }

  private drop(): void {
    this.generation++
    this.value = undefined
  }
}
