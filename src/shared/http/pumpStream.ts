import type { ServerResponse } from 'node:http'

/**
 * Writes a streamed body to `res` chunk by chunk as the source produces it, then ends the response.
 *
 * Leaner than `pipeline(Readable.from(source), res)` (no Readable in between reading ahead, one `write` per
 * chunk, nothing buffered) and it ends a source the right way: when the client goes away the source is
 * *returned* (`iterator.return()`, so its `finally` blocks run and a usage record says `cancelled`), where
 * `Readable.from` would throw an error into it. Backpressure: a `write` that answers false waits for 'drain'.
 * Rejects when the source throws (the caller destroys the response: the status is already sent).
 */
export async function pumpStream(source: AsyncIterable<string | Uint8Array>, res: ServerResponse): Promise<void> {
  const iterator = source[Symbol.asyncIterator]()
  let closed = false
  let finished = false
  let wake: (() => void) | undefined
  const onClose = () => {
    closed = true
    const resume = wake
    wake = undefined
    resume?.()
    // A generator busy awaiting its own source gets the return queued: it runs once that await settles.
    if (!finished) iterator.return?.(undefined)?.catch(() => {})
  }
  const onDrain = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  // Without a listener an 'error' of the response would be thrown; the 'close' that follows ends the pump.
  const onError = () => {}
  if (res.destroyed) onClose()
  res.on('close', onClose)
  res.on('drain', onDrain)
  res.on('error', onError)
  try {
    while (!closed) {
      const next = await iterator.next()
      if (next.done) {
        finished = true
        break
      }
      if (closed) break
      const flowing = res.write(next.value)
      // node:http corks the socket for each write and uncorks it in a nextTick, which only runs once every
      // microtask queued by now has run — here the source's next step (the metering reading the chunk just
      // passed on, the generators between it and the model server). Uncorked at once, the chunk is on the wire
      // before any of that (node:http's own uncork then finds nothing corked and does nothing).
      if (res.socket?.writableCorked) res.socket.uncork()
      if (!flowing && !closed) await new Promise<void>((resolve) => (wake = resolve))
    }
    if (!closed) res.end()
  } catch (error) {
    finished = true
    throw error
  } finally {
    res.off('close', onClose)
    res.off('drain', onDrain)
    res.off('error', onError)
  }
}
