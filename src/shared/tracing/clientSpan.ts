import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ATTR_URL_FULL } from '@opentelemetry/semantic-conventions'
import { TRACER_NAME } from './tracerName.js'

/** One outgoing call's span: the headers to send with it, and how it ends. */
export type ClientSpan = {
  /** `traceparent` (and `tracestate`) to add to the request's headers; empty when nothing is traced. */
  headers: Record<string, string>
  /** The answer's status line arrived. */
  status(code: number): void
  /** The call is over: `error` when it failed (then the span is marked failed). Idempotent. */
  end(error?: unknown): void
}

const untraced: ClientSpan = { headers: {}, status: () => undefined, end: () => undefined }

/**
 * A CLIENT span for a call made with node:http (the model server's streams, the upload of a data item), the
 * child of the request being handled; `fetch` calls get theirs from the undici instrumentation (`startTracing`).
 * `name` is `METHOD /path/template` (no identifiers, so that spans group). Outside a request, or with tracing
 * off, nothing is made and no header is sent.
 */
export function clientSpan(name: string, method: string, target: string | URL): ClientSpan {
  const active = context.active()
  const parent = trace.getSpan(active)
  if (!parent || !trace.isSpanContextValid(parent.spanContext())) return untraced
  const url = new URL(target)
  // The query string can carry what a trace store should not keep: the URL is recorded without it.
  const span = trace.getTracer(TRACER_NAME).startSpan(
    name,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_FULL]: `${url.origin}${url.pathname}`,
        [ATTR_SERVER_ADDRESS]: url.hostname,
        [ATTR_SERVER_PORT]: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      },
    },
    active,
  )
  const headers: Record<string, string> = {}
  propagation.inject(trace.setSpan(active, span), headers)
  let ended = false
  return {
    headers,
    status: (code) => {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, code)
      if (code >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
    },
    end: (error) => {
      if (ended) return
      ended = true
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
        if (error instanceof Error) span.recordException(error)
      }
      span.end()
    },
  }
}
