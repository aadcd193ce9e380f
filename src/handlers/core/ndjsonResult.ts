import type { HttpResult } from '../../shared/http/index.js'
import type { ErrorMapping } from '../types.js'

export const NDJSON = 'application/x-ndjson'

/**
 * A 200 NDJSON response of chunk batches: each batch is written as soon as it exists (one write per batch,
 * nothing buffered). A failure after the stream started cannot change the status any more: it ends the
 * stream with one `{error, message}` line in the document's `Error` shape (as Ollama ends a failed stream).
 */
export function ndjsonResult(batches: AsyncGenerator<unknown[]>, errors: ErrorMapping, onError?: (error: unknown) => void): HttpResult {
  return { status: 200, contentType: NDJSON, headers: { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' }, stream: lines(batches, errors, onError) }
}

async function* lines(batches: AsyncGenerator<unknown[]>, errors: ErrorMapping, onError?: (error: unknown) => void): AsyncGenerator<string> {
  try {
    for await (const batch of batches) {
      let text = ''
      for (const chunk of batch) text += `${JSON.stringify(chunk)}\n`
      yield text
    }
  } catch (error) {
    onError?.(error)
    const body = (errors.toResult(error)?.body as { error: string; message: string } | undefined) ?? { error: 'internal_error', message: 'internal error' }
    yield `${JSON.stringify({ error: body.error, message: body.message })}\n`
  } finally {
    await batches.return(undefined)
  }
}
