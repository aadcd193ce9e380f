import type { ChangeFeed } from './ChangeFeed.js'

export type PendingChange = {
  /** Resolves once the feed reported the change (or `all`), or after `timeoutMs`, or at once when not live. */
  settled(timeoutMs: number): Promise<void>
  /** No change is coming (the write changed no row). */
  cancel(): void
}

/**
 * Waits for the feed to report this instance's own write of `table`/`key`. On PostgreSQL the other
 * instances are told by the same NOTIFY at the same moment, so a writer that waits for its own copy before
 * answering narrows the time in which another instance can still answer from memory after the answer
 * (measured: with the wait, 4 in 300 notifications had not yet reached a second listener, against 39 in 300
 * without; see docs/performance.md). Call it before the write: the notification may arrive before the
 * write's own promise resolves. On SQLite the trigger has reported it before the write returns.
 */
export function awaitChange(feed: ChangeFeed | undefined, table: string, key: string): PendingChange {
  if (!feed) return { settled: async () => undefined, cancel: () => undefined }
  let seen = false
  let wake: (() => void) | undefined
  const unsubscribe = feed.subscribe((change) => {
    if (change.kind === 'all' || (change.table === table && (change.key === key || change.key === '*'))) {
      seen = true
      wake?.()
    }
  })
  return {
    settled: (timeoutMs) =>
      new Promise<void>((resolve) => {
        if (seen || !feed.live()) {
          unsubscribe()
          return resolve()
        }
        const timer = setTimeout(() => wake?.(), timeoutMs)
        wake = () => {
          clearTimeout(timer)
          unsubscribe()
          resolve()
        }
      }),
    cancel: unsubscribe,
  }
}
