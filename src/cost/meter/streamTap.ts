import type { CallOutcome } from '../UsageLedger.js'
import { whenNeverStarted } from './whenNeverStarted.js'

/** How the answer's stream ended: the outcome, when its first chunk came, how many chunks it had. */
export type StreamEnd = { outcome: CallOutcome; firstAt: number | undefined; chunks: number }

/** What the tap passes on and reports to. */
export type Tapped = {
  iterator: AsyncIterator<string | Uint8Array>
  /** A chunk already read by the meter (a paid call reads one before answering), and when it came. */
  first: IteratorResult<string | Uint8Array> | undefined
  firstAt: number | undefined
  /** The client's signal: a failure once it is aborted is the client leaving, not the call failing. */
  client: AbortSignal | undefined
  onEnd: (end: StreamEnd) => void
}

/**
 * Passes the answer's chunks on untouched and reports once when the stream ends or is dropped (what the
 * chunks hold is read where they come from, `countedStreams.ts`).
 */
export function streamTap(t: Tapped): AsyncGenerator<string | Uint8Array> {
  return whenNeverStarted(pass(t), () => {
    void Promise.resolve(t.iterator.return?.(undefined)).catch(() => {})
    t.onEnd({ outcome: 'cancelled', firstAt: t.firstAt, chunks: t.first && !t.first.done ? 1 : 0 })
  })
}

async function* pass({ iterator, first, firstAt, client, onEnd }: Tapped): AsyncGenerator<string | Uint8Array> {
  let outcome: CallOutcome = 'cancelled'
  let at = firstAt
  let chunks = 0
  /** Suspended at a `yield`: an error thrown in there comes from the consumer (the client went away). */
  let handedOut = false
  try {
    if (first) {
      if (first.done) {
        outcome = 'error'
        return
      }
      chunks++
      handedOut = true
      yield first.value
      handedOut = false
    }
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      at ??= performance.now()
      chunks++
      handedOut = true
      yield next.value
      handedOut = false
    }
    outcome = chunks === 0 ? 'error' : 'ok'
  } catch (error) {
    // A consumer that destroys its stream (`Readable.from` under `pipeline`, when the client disconnects) throws
    // into the generator instead of returning it: that is a cancellation, not a failure of the call. So is the
    // model-server request failing because the client went away (its signal aborts that request, which can
    // happen before the consumer returns the stream).
    if (!handedOut && !client?.aborted) outcome = 'error'
    throw error
  } finally {
    if (outcome === 'cancelled') await iterator.return?.(undefined)
    onEnd({ outcome, firstAt: at, chunks })
  }
}
