import { InvalidToolArgumentsError, ToolPayloadTooLargeError, UrlFetchFailedError, UrlNotAllowedError } from './errors.js'

export type FetchAllowedOptions = {
  /** Allowed origins (`scheme://host[:port]`); anything else is refused before any connection. */
  origins: readonly string[]
  maxBytes: number
  timeoutMs: number
  signal?: AbortSignal | undefined
  fetch?: typeof fetch | undefined
}

/**
 * Fetches a file for `store_file` — only from an allowed origin, so the gateway cannot be aimed at its own
 * network (no server-side request forgery): the origin is compared before connecting, a redirect is refused
 * (it could lead anywhere), and the body is read up to `maxBytes` within `timeoutMs`.
 */
export async function fetchAllowed(text: string, o: FetchAllowedOptions): Promise<{ bytes: Buffer; mimeType: string | undefined }> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new InvalidToolArgumentsError('url is not a URL')
  }
  if (url.username || url.password || !o.origins.includes(url.origin)) throw new UrlNotAllowedError(url.origin)
  const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(o.timeoutMs)]) : AbortSignal.timeout(o.timeoutMs)
  let response: Response
  try {
    response = await (o.fetch ?? fetch)(url, { redirect: 'manual', signal })
  } catch (error) {
    throw new UrlFetchFailedError(`fetching ${url.origin} failed`, error)
  }
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel().catch(() => undefined)
    throw new UrlFetchFailedError(`${url.origin} answered ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`)
  }
  const declared = Number(response.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > o.maxBytes) {
    await response.body.cancel().catch(() => undefined)
    throw new ToolPayloadTooLargeError('the file at url', o.maxBytes)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length
      if (size > o.maxBytes) throw new ToolPayloadTooLargeError('the file at url', o.maxBytes)
      chunks.push(chunk)
    }
  } catch (error) {
    if (error instanceof ToolPayloadTooLargeError) throw error
    throw new UrlFetchFailedError(`reading ${url.origin} failed`, error)
  }
  const type = response.headers.get('content-type')?.split(';')[0]?.trim()
  return { bytes: Buffer.concat(chunks), mimeType: type || undefined }
}
