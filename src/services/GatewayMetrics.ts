import { Counter, Histogram, Registry } from 'prom-client'
import type { ResponseInfo } from '../shared/http/index.js'

/**
 * The gateway's Prometheus metrics (`GET /metrics`): requests and durations by operation, and the arrival
 * gate's redirects and 401s, and the caches' hits, misses and invalidations.
 */
export class GatewayMetrics {
  readonly registry = new Registry()
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests handled, by operation and status.',
    labelNames: ['operation', 'method', 'status'],
    registers: [this.registry],
  })
  private readonly durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request duration by operation.',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  })
  private readonly redirects = new Counter({ name: 'gate_redirects_total', help: 'Requests redirected to /login by the arrival gate.', registers: [this.registry] })
  private readonly unauthenticated = new Counter({
    name: 'gate_auth_required_total',
    help: 'API requests answered 401 auth_required by the arrival gate.',
    registers: [this.registry],
  })

  private readonly cacheEvents = new Counter({
    name: 'gateway_cache_events_total',
    help: 'Cache lookups answered from memory (hit) or the database (miss), and entries dropped by a change (invalidation), by cache.',
    labelNames: ['cache', 'event'],
    registers: [this.registry],
  })

  /** A counter per cache and event, bound once (no label hashing per request). */
  cacheEventRecorder(cache: 'session' | 'agent_registry'): (event: 'hit' | 'miss' | 'invalidation') => void {
    const children = { hit: this.cacheEvents.labels(cache, 'hit'), miss: this.cacheEvents.labels(cache, 'miss'), invalidation: this.cacheEvents.labels(cache, 'invalidation') }
    return (event) => children[event].inc()
  }

  recordResponse(info: ResponseInfo): void {
    const operation = info.operationId ?? 'unrouted'
    this.requests.inc({ operation, method: info.method, status: String(info.status) })
    this.durations.observe({ operation }, info.durationMs / 1000)
  }

  gateRedirect(): void {
    this.redirects.inc()
  }

  gateAuthRequired(): void {
    this.unauthenticated.inc()
  }

  /** Serves a domain's own metrics (e.g. paid storage's upstream credit) with the gateway's. */
  adopt(domain: Registry): void {
    for (const { name } of domain.getMetricsAsArray()) {
      const metric = domain.getSingleMetric(name)
      if (metric) this.registry.registerMetric(metric)
    }
  }

  /** Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics()
  }
}
