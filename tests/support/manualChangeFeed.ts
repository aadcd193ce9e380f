import type { Change, ChangeFeed } from '../../src/cache/ChangeFeed.js'
import { ChangeListeners } from '../../src/cache/ChangeListeners.js'

/** A change feed a test drives: set `isLive`, `emit` changes; `listeners.size` shows who still follows it. */
export function manualChangeFeed() {
  const listeners = new ChangeListeners()
  const feed = {
    isLive: true,
    live: () => feed.isLive,
    subscribe: (listener: (change: Change) => void) => listeners.add(listener),
    ready: async () => undefined,
    barrier: async () => true,
    close: async () => undefined,
    emit: (change: Change) => listeners.emit(change),
    listeners,
  }
  return feed satisfies ChangeFeed
}
