/**
 * A push-based NDJSON stream: producers `push` objects, the HTTP layer iterates lines. `fail` ends the stream
 * with a final `{"error": "..."}` line (Ollama's mid-stream error). Iteration stops when the consumer goes away.
 */
export class NdjsonChannel implements AsyncIterable<string> {
  private readonly queue: string[] = []
  private waiter: (() => void) | undefined
  private ended = false

  push(value: unknown): void {
    if (this.ended) return
    this.queue.push(`${JSON.stringify(value)}\n`)
    this.wake()
  }

  end(): void {
    this.ended = true
    this.wake()
  }

  fail(message: string): void {
    if (this.ended) return
    this.push({ error: message })
    this.end()
  }

  get closed(): boolean {
    return this.ended
  }

  private wake(): void {
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    while (true) {
      if (this.queue.length > 0) {
        // Coalesce what is queued into one write.
        yield this.queue.splice(0).join('')
        continue
      }
      if (this.ended) return
      await new Promise<void>((resolve) => (this.waiter = resolve))
    }
  }
}

export const NDJSON = 'application/x-ndjson'
