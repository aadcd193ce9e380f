/**
 * Writes that share a round: `add(item)` resolves, or rejects, with the round that wrote the item. A round
 * starts as soon as the one before it has ended; every item added meanwhile waits and goes in the next — one
 * append, one transaction for all of them (a group commit) — in the order added, at most `max` to a round.
 * Under a burst the rounds stay few; a lone item is written at once (one microtask later).
 */
export function groupedWrites<T>(write: (items: readonly T[]) => Promise<void>, { max = 500 }: { max?: number } = {}): (item: T) => Promise<void> {
  let tail: Promise<unknown> = Promise.resolve()
  let next: { items: T[]; written: Promise<void> } | undefined
  return (item) => {
    if (next && next.items.length < max) {
      next.items.push(item)
      return next.written
    }
    const round: T[] = [item]
    const written = tail.then(() => {
      // From here on the round is closed: an item added now starts the next one.
      if (next?.items === round) next = undefined
      return write(round)
    })
    next = { items: round, written }
    tail = written.catch(() => undefined)
    return written
  }
}
