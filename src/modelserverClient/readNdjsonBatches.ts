/**
 * The parsed lines of an NDJSON body, one batch per network read: every complete line that arrived in a read
 * is yielded at once, nothing is held back for the next read (streams are forwarded as they are produced;
 * batching by read only saves writes when the producer was faster than the reader). A final line without a
 * newline is yielded when the body ends. A line that is not JSON throws `NdjsonLineError`. Returning early
 * returns the byte source (which closes the connection to the producer).
 */
export class NdjsonLineError extends Error {
  override name = 'NdjsonLineError'
}

export async function* readNdjsonBatches(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<unknown[]> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const value of bytes) {
    buffer += decoder.decode(value, { stream: true })
    const last = buffer.lastIndexOf('\n')
    if (last < 0) continue
    const complete = buffer.slice(0, last)
    buffer = buffer.slice(last + 1)
    const batch = parseLines(complete)
    if (batch.length > 0) yield batch
  }
  buffer += decoder.decode()
  const tail = parseLines(buffer)
  if (tail.length > 0) yield tail
}

function parseLines(text: string): unknown[] {
  const out: unknown[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      out.push(JSON.parse(line))
    } catch {
      throw new NdjsonLineError(`not a JSON line: ${line.slice(0, 80)}`)
    }
  }
  return out
}
