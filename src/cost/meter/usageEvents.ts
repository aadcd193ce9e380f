/** The end of an SSE event: a blank line (`\n\n`; `\r\n\r\n` from servers that frame with CRLF). */
function lastEventEnd(buffer: Buffer): number {
  const lf = buffer.lastIndexOf('\n\n')
  const crlf = buffer.lastIndexOf('\r\n\r\n')
  return Math.max(lf < 0 ? 0 : lf + 2, crlf < 0 ? 0 : crlf + 4)
}

/** A usage-only event of an OpenAI stream (`stream_options.include_usage`): no choices, the usage. */
function isUsageOnly(event: string): boolean {
  const data = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .join('\n')
  if (!data.startsWith('{')) return false
  try {
    const o = JSON.parse(data) as { choices?: unknown; usage?: unknown }
    return Array.isArray(o.choices) && o.choices.length === 0 && typeof o.usage === 'object' && o.usage !== null
  } catch {
    return false
  }
}

/**
 * Takes the usage event out of an OpenAI chat or text completion stream whose client did not ask for it: the
 * meter asks the model server for usage on every stream it meters (`stream_options.include_usage`), and a
 * client that did not ask must get the stream it asked for.
 *
 * Events pass as they come. Only a chunk that holds a complete event naming `"usage"` is parsed (that key,
 * quotes included, cannot appear inside a JSON string, where quotes are escaped); an event cut between two
 * reads is held until its end arrives — an SSE client acts on an event only at its end, so it loses no time.
 */
export class UsageEventFilter {
  #carry: Buffer | undefined

  /** What of `chunk` goes to the client now (`undefined`: nothing yet). */
  pass(chunk: Uint8Array): Uint8Array | undefined {
    let buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.#carry) buffer = Buffer.concat([this.#carry, buffer])
    const end = lastEventEnd(buffer)
    this.#carry = end < buffer.length ? buffer.subarray(end) : undefined
    const complete = end < buffer.length ? buffer.subarray(0, end) : buffer
    if (complete.length === 0) return undefined
    if (!complete.includes('"usage"')) return complete
    const events = complete.toString('utf8').split(/(?<=\r?\n\r?\n)/)
    const kept = events.filter((event) => !isUsageOnly(event)).join('')
    return kept === '' ? undefined : Buffer.from(kept, 'utf8')
  }

  /** At the end of the stream: an unfinished last event, as it came. */
  flush(): Uint8Array | undefined {
    const rest = this.#carry
    this.#carry = undefined
    return rest
  }
}
