import type { Registry } from 'prom-client'
import type { ModelSummary } from '../../../generated/modelserver/types.gen.js'
import type { ModelServerModels } from '../../../generated/gateway/types.gen.js'
import { ModelServerClient, type UpstreamResponse } from '../../modelserverClient/ModelServerClient.js'
import { ModelServerPool, type ModelServerPoolParameters, type ModelServerState } from '../../modelserverClient/ModelServerPool.js'
import { chatCapableModels } from './chatCapableModels.js'
import { Meter, type MeterDeps } from './Meter.js'

/**
 * The gateway's model servers (one, or several routed by model and load). What the rest of the gateway may do
 * with them directly is read — health, the installed models, which of them chat, the `/v1/models` lists;
 * everything that makes them generate or embed goes through the meter this builds (`meter`), which alone holds
 * the pool.
 */
export class ModelServers {
  readonly #pool: ModelServerPool

  constructor(p: ModelServerPoolParameters) {
    this.#pool = new ModelServerPool(p)
  }

  /** The meter of every call that makes these model servers work. */
  meter(deps: Omit<MeterDeps, 'pool'>): Meter {
    return new Meter({ ...deps, pool: this.#pool })
  }

  /** `gateway_modelserver_*` gauges and the failover counter (`/metrics`). */
  get registry(): Registry {
    return this.#pool.registry
  }

  /** The first configured server. */
  get baseUrl(): string {
    return this.#pool.baseUrl
  }

  start(): void {
    this.#pool.start()
  }

  stop(): void {
    this.#pool.stop()
  }

  /** Each server's state, as `/health/detailed` reports it. */
  servers(): ModelServerState[] {
    return this.#pool.servers()
  }

  check(): ReturnType<ModelServerPool['check']> {
    return this.#pool.check()
  }

  listModels(signal?: AbortSignal): Promise<ModelSummary[]> {
    return this.#pool.listModels(signal)
  }

  installedModels(signal?: AbortSignal): Promise<ModelServerModels> {
    return this.#pool.installedModels(signal)
  }

  /** The installed models that can chat (`/api/show` lists `completion`), by canonical name. */
  chatCapableModels(signal?: AbortSignal): Promise<string[]> {
    return chatCapableModels(this.#pool, signal)
  }

  /** `GET /v1/models` of every server that is up (the caller merges the lists). */
  openAiModels(signal?: AbortSignal): Promise<UpstreamResponse[]> {
    return this.#pool.openEach('GET /v1/models', { method: 'GET', path: '/v1/models' }, signal)
  }

  /** A whole (small) answer's body as text. */
  static text(upstream: UpstreamResponse): Promise<string> {
    return ModelServerClient.text(upstream)
  }
}
