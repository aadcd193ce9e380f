/**
 * How a token stream is written: one frame per object, an optional trailer after the last one, and the body
 * of a mid-stream error.
 */
export type StreamFraming = {
  contentType: string
  frame(value: unknown): string
  /** Written after the last frame of a stream that ended normally or failed (SSE's `data: [DONE]`). */
  trailer?: string
  errorBody(message: string): unknown
}

export const NDJSON = 'application/x-ndjson'

/** Ollama's streams: one JSON object per line; a failed stream ends with `{"error": "..."}`. */
export const ndjsonFraming: StreamFraming = {
  contentType: NDJSON,
  frame: (value) => `${JSON.stringify(value)}\n`,
  errorBody: (message) => ({ error: message }),
}

/**
 * A push-based stream of framed objects (NDJSON by default; `framing` for server-sent events): producers `push`
 * objects, the HTTP layer iterates text. `fail` ends the stream with the framing's error body (Ollama's
 * mid-stream `{"error": "..."}` line). Iteration stops when the consumer goes away.
 *
 * Lines pushed within `flushIntervalMs` of the previous write are written together: generation pushes one
 * chunk per token, and every write costs event-loop time that llama.cpp's token loop shares. The first line
 * and the last one are never delayed.
 */
export class NdjsonChannel implements AsyncIterable<string> {
  private readonly queue: string[] = []
  private waiter: (() => void) | undefined
  private ended = false
  private lastFlush = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly flushIntervalMs = 0,
    readonly framing: StreamFraming = ndjsonFraming,
  ) {}

  push(value: unknown): void {
    if (this.ended) return
    this.queue.push(this.framing.frame(value))
    this.schedule()
  }

  end(): void {
    if (this.ended) return
    if (this.framing.trailer !== undefined) this.queue.push(this.framing.trailer)
    this.ended = true
    this.wake()
  }

  fail(message: string): void {
    if (this.ended) return
    this.push(this.framing.errorBody(message))
    this.end()
  }

  get closed(): boolean {
    return this.ended
  }

  private schedule(): void {
    if (this.timer) return
    const wait = this.lastFlush + this.flushIntervalMs - performance.now()
    if (this.flushIntervalMs <= 0 || wait <= 0) {
      this.wake()
      return
    }
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.wake()
    }, wait)
  }

  private wake(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    try {
      while (true) {
        if (this.queue.length > 0 && (this.ended || !this.timer)) {
          this.lastFlush = performance.now()
          yield this.queue.splice(0).join('')
          continue
        }
        if (this.ended && this.queue.length === 0) return
        await new Promise<void>((resolve) => (this.waiter = resolve))
      }
    } finally {
      if (this.timer) clearTimeout(this.timer)
      this.ended = true
    }
  }
}


/**
 * Write interval for token streams (ms): at most 20 writes per second per stream. Each write is a syscall that
 * runs on the token loop's thread between two tokens (on loopback it also drives the receiver's TCP path):
 * profiled at ~0.3-0.45 ms per write on the 2-core VMs. At 10 ms, the ~20 writes of a 512-token generation cost
 * ~8% of the server's CPU and pushed HTTP streaming 15% below in-process; 50 ms keeps text flowing smoothly
 * (20 updates per second) for a fifth of that (scripts/bench/modelserverThroughput.ts).
 */
export const TOKEN_FLUSH_INTERVAL_MS = 50
