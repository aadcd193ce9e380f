import { context, diag, DiagLogLevel, propagation, trace, type Tracer } from '@opentelemetry/api'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import type { Logger } from '../logger.js'
import { withDeadline } from '../withDeadline.js'
import { TRACER_NAME } from './tracerName.js'

/** What a program's configuration says of traces (`SERVICE_TRACING__*` for the gateway, `MODELSERVER_TRACING_*`). */
export type TracingSettings = {
  /** Off by default: no provider, no span, no `traceparent` sent. */
  enabled: boolean
  /** `service.name` of every span (`OTEL_SERVICE_NAME` when set). */
  serviceName: string
  serviceVersion: string
  /** Where spans go: an OTLP/HTTP (JSON) traces endpoint, e.g. `http://collector:4318/v1/traces`. */
  otlpTracesUrl: string
  /** Share of new traces kept (0–1); a trace begun upstream keeps its caller's decision (`sampled` flag). */
  sampleRatio: number
}

export type Tracing = {
  enabled: boolean
  /** The program's tracer (its server spans); a no-op tracer when tracing is off. */
  tracer: Tracer
  /** Sends what is buffered and stops; the process-wide registration is undone by the program that made it. */
  close(): Promise<void>
}

/**
 * Traces of one program (the gateway or the model server). Off, nothing is loaded or registered: the
 * OpenTelemetry API then hands out no-op spans and injects no header. On:
 * - a tracer provider whose spans go to `exporter` (tests: an in-memory one) or, by default, to the OTLP/HTTP
 *   endpoint of the settings, batched off the request path;
 * - registered for the whole process, with the AsyncLocalStorage context (the active span follows a request
 *   through its awaits) and the W3C trace-context propagator (`traceparent`), so that the clients built anywhere
 *   in the program (`clientSpan`) and `fetch` (the undici instrumentation, which listens on Node's diagnostics
 *   channels: no module is patched) make child spans of the request and send `traceparent`. Outgoing calls made
 *   outside a request (background work) get no span: one trace is one request.
 *
 * Only the first program of a process registers (one process runs one program; tests that run both in one
 * process get each program's server spans from its own provider, the outgoing calls from the first's).
 *
 * Why not `@opentelemetry/sdk-node`: it adds the gRPC and protobuf exporters, Zipkin, Prometheus and the metrics
 * and logs exporters (13.9 MB more in the production install, which has a 300 MB budget) that traces over OTLP/HTTP
 * do not use; these are the parts of it they do (docs/reliability.md).
 */
export async function startTracing(settings: TracingSettings, options: { exporter?: SpanExporter; logger?: Logger | undefined } = {}): Promise<Tracing> {
  if (!settings.enabled) return { enabled: false, tracer: trace.getTracer(TRACER_NAME), close: async () => undefined }
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, { UndiciInstrumentation }, { resourceFromAttributes }, sdk, semconv] =
    await Promise.all([
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-undici'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/semantic-conventions'),
    ])
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: settings.otlpTracesUrl })
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: settings.serviceName, [semconv.ATTR_SERVICE_VERSION]: settings.serviceVersion }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(settings.sampleRatio) }),
    // An exporter handed in (tests) sees each span as it ends; the collector gets them in batches.
    spanProcessors: [options.exporter ? new sdk.SimpleSpanProcessor({ exporter }) : new sdk.BatchSpanProcessor({ exporter })],
  })
  const tracer = provider.getTracer(TRACER_NAME, settings.serviceVersion)
  let unregister: (() => void) | undefined
  if (trace.setGlobalTracerProvider(provider)) {
    // The SDK reports a failed export (collector down) through its diagnostic logger: one warning a minute at most,
    // as a collector that is down fails every batch (every 5 s), which costs spans, never requests.
    let lastWarning = 0
    const warn = (message: string, ...args: unknown[]) => {
      if (Date.now() - lastWarning < 60_000) return
      lastWarning = Date.now()
      options.logger?.warn({ err: readable(message), detail: args.map((a) => readable(a)).join(' ') || undefined }, 'tracing: the OpenTelemetry SDK reports a problem (a refused export: is the collector up?)')
    }
    const quiet = () => undefined
    diag.setLogger({ error: warn, warn, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN)
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const undici = new UndiciInstrumentation({ requireParentforSpans: true })
    undici.setTracerProvider(provider)
    unregister = () => {
      undici.disable()
      trace.disable()
      propagation.disable()
      context.disable()
      diag.disable()
    }
  }
  return {
    enabled: true,
    tracer,
    close: async () => {
      // The last spans are sent, within a bound: a stopping program never waits long on, or fails for, its collector.
      await withDeadline(provider.shutdown(), 5_000, 'the trace collector').catch((error: unknown) =>
        options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'tracing: the last spans were not sent'),
      )
      unregister?.()
      unregister = undefined
    },
  }
}

/** The SDK's global error handler passes an error serialised as JSON, stack included: its message is what a log line needs. */
function readable(value: unknown): string {
  if (value instanceof Error) return value.message
  const text = String(value)
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    return typeof parsed?.message === 'string' ? parsed.message : text
  } catch {
    return text
  }
}
