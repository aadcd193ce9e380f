import { type CallUsage, StreamUsageScanner, usageOf } from '../callUsage.js'
import type { GenerationAccount } from './CallBudget.js'
import type { UsageEventFilter } from './usageEvents.js'
import { whenNeverStarted } from './whenNeverStarted.js'

/** Reads the model server's own count off a generation's stream as it passes. */
export type UsageReader<T> = {
  feed(item: T): void
  end(): void
  readonly usage: CallUsage
  /** The stream carried the model server's error (it failed after it started). */
  readonly errored: boolean
  /** Pieces read so far (data events or chunks): a running call's estimate of its tokens until the count is in. */
  readonly chunks: number
}

export type CountingOptions = {
  /**
   * A stream its consumer leaves early (the client went away) is read to its end, so the model server's count
   * arrives and is billed — nothing of it is passed on. Set for calls paid per token: a cut connection would
   * stop the model server without its count. Otherwise the stream is closed at once.
   */
  drainOnCancel: boolean
  /** When the meter itself cut the generation (its deadline), the error to throw instead of the model server's. */
  cutBy: () => unknown
}

/** An NDJSON or SSE body's reader: the final usage event, an error line or event. */
export function bytesReader(): UsageReader<Uint8Array> {
  return new StreamUsageScanner()
}

/** Parsed NDJSON chunks (Ollama's): the usage of the `done` chunk; the model-server client throws on an error line. */
export function batchReader<T>(): UsageReader<T[]> {
  let usage: CallUsage = {}
  let chunks = 0
  return {
    feed(batch) {
      for (const chunk of batch) {
        if ((chunk as { done?: unknown }).done === true) usage = usageOf(chunk)
        else chunks++
      }
    },
    end() {},
    get usage() {
      return usage
    },
    get chunks() {
      return chunks
    },
    errored: false,
  }
}

/** Reports what a finished stream produced: its count when the model server gave one, else its whole allowance. */
function report<T>(reader: UsageReader<T>, account: GenerationAccount): void {
  if (reader.errored) account.uncounted({ failed: true })
  else if (reader.usage.completionTokens !== undefined) account.counted(reader.usage)
  else account.uncounted()
}

/** Reads what is left of a stream its consumer left, for the model server's count (nothing is passed on). */
async function drain<T>(source: AsyncGenerator<T>, reader: UsageReader<T>, account: GenerationAccount, o: CountingOptions): Promise<void> {
  try {
    for (;;) {
      const next = await source.next()
      if (next.done) break
      reader.feed(next.value)
    }
    reader.end()
    report(reader, account)
  } catch {
    if (reader.usage.completionTokens !== undefined) account.counted(reader.usage)
    else account.uncounted({ failed: o.cutBy() === undefined })
  }
}

/**
 * One generation's stream, passed on as it comes and counted on the way (the model server's own count, never
 * an estimate): each item is read after it was handed on — off the path of the first token — and one handed
 * on but never resumed after is read when the stream is closed. `filter` takes events out before they are
 * passed on (the usage the client did not ask for); the reader still sees them.
 */
export function counted<T>(source: AsyncGenerator<T>, reader: UsageReader<T>, account: GenerationAccount, o: CountingOptions, filter?: (item: T) => T | undefined): AsyncGenerator<T> {
  account.watch(() => reader.chunks)
  // left before it was read at all: nothing was served
  return whenNeverStarted(passCounted(source, reader, account, o, filter), () => {
    account.counted({})
    void source.return(undefined).catch(() => {})
  })
}

async function* passCounted<T>(source: AsyncGenerator<T>, reader: UsageReader<T>, account: GenerationAccount, o: CountingOptions, filter?: (item: T) => T | undefined): AsyncGenerator<T> {
  let unread: T | undefined
  let ended = false
  let threw = false
  try {
    for (;;) {
      let next: IteratorResult<T>
      try {
        next = await source.next()
      } catch (error) {
        ended = true
        threw = true
        throw o.cutBy() ?? error
      }
      if (next.done) {
        ended = true
        break
      }
      const out = filter ? filter(next.value) : next.value
      if (out === undefined) {
        reader.feed(next.value)
        continue
      }
      unread = next.value
      yield out
      reader.feed(unread)
      unread = undefined
    }
  } finally {
    if (unread !== undefined) reader.feed(unread)
    if (ended) {
      reader.end()
      // the model server's count, when it came before the end (even an end the meter or a failure made)
      if (reader.usage.completionTokens !== undefined) report(reader, account)
      else account.uncounted({ failed: reader.errored || (threw && o.cutBy() === undefined) })
    } else if (reader.usage.completionTokens !== undefined) {
      // the count is in (the client left after the last token): nothing more to read
      account.counted(reader.usage)
      void source.return(undefined).catch(() => {})
    } else if (o.drainOnCancel) void drain(source, reader, account, o)
    else {
      account.uncounted()
      void source.return(undefined).catch(() => {})
    }
  }
}

/** `counted` for SSE bytes whose usage event the client did not ask for: taken out, an unfinished last event kept. */
export function countedWithout(source: AsyncGenerator<Uint8Array>, account: GenerationAccount, o: CountingOptions, usageEvents: UsageEventFilter): AsyncGenerator<Uint8Array> {
  const inner = counted(source, bytesReader(), account, o, (chunk) => usageEvents.pass(chunk))
  async function* withRest() {
    yield* inner
    const rest = usageEvents.flush()
    if (rest) yield rest
  }
  return whenNeverStarted(withRest(), () => void inner.return(undefined))
}

/** A whole JSON answer read through the meter: its usage is counted once it is read to its end. */
export function countedJson(source: AsyncGenerator<Uint8Array>, account: GenerationAccount): AsyncGenerator<Uint8Array> {
  return whenNeverStarted(readJson(source, account), () => {
    account.counted({})
    void source.return(undefined).catch(() => {})
  })
}

async function* readJson(source: AsyncGenerator<Uint8Array>, account: GenerationAccount): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder()
  let text = ''
  let read = false
  try {
    for await (const chunk of source) {
      text += decoder.decode(chunk, { stream: true })
      yield chunk
    }
    read = true
  } finally {
    let usage: CallUsage = {}
    if (read) {
      try {
        usage = usageOf(JSON.parse(text + decoder.decode()))
      } catch {
        usage = {}
      }
    }
    // a whole answer that was not read to its end was not served: nothing of it counts
    account.counted(usage)
  }
}
