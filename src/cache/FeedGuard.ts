import type { ChangeFeed, ChangeListener } from './ChangeFeed.js'

/**
 * What every cache over a change feed needs besides its values: the subscription, whether memory may answer
 * (not closed, the feed live), and the race guard — a generation that moves whenever anything is dropped, so
 * a database read that was in flight across a drop is not kept (it may predate the change).
 */
export class FeedGuard {
  #generation = 0
  #closed = false
  readonly #unsubscribe: () => void

  constructor(
    private readonly feed: ChangeFeed,
    onChange: ChangeListener,
  ) {
    this.#unsubscribe = feed.subscribe(onChange)
  }

  /** Memory may answer. Asks the feed each time: `live()` may itself report a change first (and drop). */
  get usable(): boolean {
    return !this.#closed && this.feed.live()
  }

  /** Taken before a database read whose result may be kept. */
  get epoch(): number {
    return this.#generation
  }

  /** A result read since `epoch` may be kept: memory is usable and nothing was dropped in between. */
  keeps(epoch: number): boolean {
    return this.usable && epoch === this.#generation
  }

  /** Something was dropped: reads in flight are not kept. */
  dropped(): void {
    this.#generation++
  }

  /** Stops following changes; memory no longer answers. */
  close(): void {
    this.#unsubscribe()
    this.#closed = true
  }
}
