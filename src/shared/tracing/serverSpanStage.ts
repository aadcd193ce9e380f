import type { IncomingMessage, ServerResponse } from 'node:http'
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions'

/** The document's operation at a method and path (`OpenApiRouter.matchOperation`). */
export type RouteOf = (method: string, path: string) => { operationId: string; pathTemplate: string } | undefined

/** Attribute of the server span naming the document's operation (the route's `operationId`). */
export const ATTR_OPERATION_ID = 'openapi.operation_id'

/**
 * The tracing stage: one SERVER span per request, the parent of every span made while it is handled. A
 * `traceparent` the caller sent is joined (the model server's span is then a child of the gateway's call); the
 * context is built from the headers alone, so a request never inherits another's trace. The span is named
 * `METHOD /path/{template}` once the request is answered (`routeOf`) and ends when the response is done or the
 * connection closes; a 5xx marks it failed.
 *
 * Only installed when tracing is on (`Tracing.enabled`): off, the pipeline has no such stage.
 */
export function serverSpanStage({ tracer, routeOf }: { tracer: Tracer; routeOf: RouteOf }) {
  return (req: IncomingMessage & { path: string }, res: ServerResponse, next: (error?: unknown) => void): void => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers)
    const method = req.method ?? 'GET'
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: req.path } }, parent)
    res.once('close', () => {
      const route = routeOf(method, req.path)
      if (route) {
        span.updateName(`${method} ${route.pathTemplate}`)
        span.setAttributes({ [ATTR_HTTP_ROUTE]: route.pathTemplate, [ATTR_OPERATION_ID]: route.operationId })
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode)
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      // closed before the whole answer was written: the client went away, or the server cut the connection
      if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'connection closed before the response ended' })
      span.end()
    })
    context.with(trace.setSpan(parent, span), next)
  }
}
