import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Resident } from '../residency/ResidencyManager.js'

/**
 * Prometheus metrics of one model server instance (its own registry, so several instances can live in one
 * process): requests, tokens in and out, load time, resident models and their memory, queue depth.
 */
export class ModelServerMetrics {
  readonly registry = new Registry()
  readonly requests: Counter<'operation' | 'status'>
  readonly requestDuration: Histogram<'operation'>
  readonly promptTokens: Counter<'model'>
  readonly generatedTokens: Counter<'model'>
  readonly loadSeconds: Histogram<'model'>
  readonly loads: Counter<'model'>
  readonly unloads: Counter<'model'>
  readonly residentModels: Gauge
  readonly residentBytes: Gauge<'model'>
  readonly residentTotalBytes: Gauge
  readonly queueDepth: Gauge<'model'>

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry]
    this.requests = new Counter({
      name: 'modelserver_requests_total',
      help: 'HTTP requests by operation and status.',
      labelNames: ['operation', 'status'],
      registers,
    })
    this.requestDuration = new Histogram({
      name: 'modelserver_request_duration_seconds',
      help: 'Time to the end of the response, by operation.',
      labelNames: ['operation'],
      buckets: [0.005, 0.02, 0.1, 0.5, 1, 2.5, 5, 15, 60, 300],
      registers,
    })
    this.promptTokens = new Counter({
      name: 'modelserver_prompt_tokens_total',
      help: 'Input tokens evaluated, by model.',
      labelNames: ['model'],
      registers,
    })
    this.generatedTokens = new Counter({
      name: 'modelserver_generated_tokens_total',
      help: 'Output tokens generated, by model.',
      labelNames: ['model'],
      registers,
    })
    this.loadSeconds = new Histogram({
      name: 'modelserver_model_load_seconds',
      help: 'Time to load a model into memory.',
      labelNames: ['model'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
      registers,
    })
    this.loads = new Counter({ name: 'modelserver_model_loads_total', help: 'Model loads.', labelNames: ['model'], registers })
    this.unloads = new Counter({
      name: 'modelserver_model_unloads_total',
      help: 'Model unloads (expiry, keep_alive 0, memory budget, delete).',
      labelNames: ['model'],
      registers,
    })
    this.residentModels = new Gauge({ name: 'modelserver_resident_models', help: 'Models loaded in memory.', registers })
    this.residentBytes = new Gauge({
      name: 'modelserver_resident_model_bytes',
      help: 'Memory held by each loaded model (weights + context).',
      labelNames: ['model'],
      registers,
    })
    this.residentTotalBytes = new Gauge({
      name: 'modelserver_resident_bytes',
      help: 'Memory held by all loaded models.',
      registers,
    })
    this.queueDepth = new Gauge({
      name: 'modelserver_queue_depth',
      help: 'Requests queued or running, by model.',
      labelNames: ['model'],
      registers,
    })
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'modelserver_' })
  }

  setResidents(residents: readonly Resident[]): void {
    this.residentBytes.reset()
    let total = 0
    for (const r of residents) {
      this.residentBytes.set({ model: r.name }, r.model.sizeBytes)
      total += r.model.sizeBytes
    }
    this.residentModels.set(residents.length)
    this.residentTotalBytes.set(total)
  }

  async text(): Promise<string> {
    return this.registry.metrics()
  }
}
