import type { Change, ChangeListener } from './ChangeFeed.js'

/** The subscribers of a change feed: each change goes to every one, in subscription order. */
export class ChangeListeners {
  private readonly listeners = new Set<ChangeListener>()

  get size(): number {
    return this.listeners.size
  }

  add(listener: ChangeListener): () => void {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  emit(change: Change): void {
    for (const listener of this.listeners) listener(change)
  }
}
