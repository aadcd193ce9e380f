import { stat } from 'node:fs/promises'
import type { Engine, EngineModel, ModelKind } from '../engine/Engine.js'
import { ModelServerError, serverBusy } from '../errors.js'
import { displayName, nameKey } from '../store/ModelName.js'
import type { ModelRecord } from '../store/ModelStore.js'

export type Resident = {
  key: string
  name: string
  record: ModelRecord
  model: EngineModel
  /** Epoch ms of the last request start or end. */
  lastUsed: number
  /** Epoch ms when the model will be unloaded; Infinity = never. */
  expiresAt: number
  /** Requests holding the model (running or queued in the engine). */
  active: number
  timer: NodeJS.Timeout | undefined
  /** An unload was asked while requests held the model: unload when the last one ends. */
  unloadRequested: boolean
}

export type Lease = {
  resident: Resident
  model: EngineModel
  /** Nanoseconds spent loading the model for this request (0 when it was already resident). */
  loadDurationNs: number
  /** Ends the request: sets the expiry from `keepAliveMs` (0 unloads now, Infinity never). Idempotent. */
  release(keepAliveMs: number): Promise<void>
}

export type ResidencyEvents = {
  onLoad?: (name: string, durationNs: number) => void
  onUnload?: (name: string) => void
  onChange?: (residents: readonly Resident[]) => void
}

export type ResidencyOptions = {
  engine: Engine
  /** Memory budget for all resident models (bytes). */
  maxLoadedBytes: number
  /** Requests per model (queued or running) before 503 `server busy`. */
  maxQueue: number
  /** Context size to load with when a request does not set `num_ctx`. */
  defaultNumCtx: number
  events?: ResidencyEvents
  now?: () => number
}

/**
 * Seed §3.1: models load on demand, stay for `keep_alive` after each request (0 unloads at once, a negative
 * value keeps them forever), expire on a timer, and the least recently used idle model is unloaded when the
 * memory budget would be exceeded. Also bounds each model's request queue.
 */
export class ResidencyManager {
  private readonly residents = new Map<string, Resident>()
  private readonly loading = new Map<string, Promise<Resident>>()
  private readonly inflight = new Map<string, number>()
  private readonly now: () => number

  constructor(private readonly options: ResidencyOptions) {
    this.now = options.now ?? Date.now
  }

  /** Resident models, most recently used first. */
  list(): Resident[] {
    return [...this.residents.values()].sort((a, b) => b.lastUsed - a.lastUsed)
  }

  get(record: ModelRecord): Resident | undefined {
    return this.residents.get(nameKey(record.name))
  }

  totalBytes(): number {
    let n = 0
    for (const r of this.residents.values()) n += r.model.sizeBytes
    return n
  }

  queueDepth(record: ModelRecord): number {
    return this.inflight.get(nameKey(record.name)) ?? 0
  }

  /**
   * Takes the model for one request, loading it if needed. Throws 503 when the model already has `maxQueue`
   * requests. The caller must `release` the lease.
   */
  async acquire(record: ModelRecord, params: { keepAliveMs: number; kind?: ModelKind; signal?: AbortSignal }): Promise<Lease> {
    const key = nameKey(record.name)
    const depth = this.inflight.get(key) ?? 0
    if (depth >= this.options.maxQueue) throw serverBusy()
    this.inflight.set(key, depth + 1)
    let released = false
    const dropInflight = () => {
      const n = (this.inflight.get(key) ?? 1) - 1
      if (n <= 0) this.inflight.delete(key)
      else this.inflight.set(key, n)
    }
    try {
      let loadDurationNs = 0
      let resident = this.residents.get(key)
      if (resident && resident.record.modelDigest !== record.modelDigest && resident.active === 0) {
        // The name now points at another model file (re-created): drop the stale one.
        await this.unloadResident(resident)
        resident = undefined
      }
      if (!resident) {
        let pending = this.loading.get(key)
        const mine = !pending
        if (!pending) {
          pending = this.load(record, params.kind)
          this.loading.set(key, pending)
          pending.finally(() => this.loading.delete(key)).catch(() => {})
        }
        resident = await pending
        if (mine) loadDurationNs = resident.model.loadDurationNs
      }
      // Same model file: adopt the latest manifest (system prompt, parameters may have changed).
      if (resident.record.modelDigest === record.modelDigest) resident.record = record
      resident.active++
      resident.lastUsed = this.now()
      this.clearTimer(resident)
      resident.unloadRequested = false
      resident.expiresAt = expiry(this.now(), params.keepAliveMs)
      this.options.events?.onChange?.(this.list())
      const r = resident
      return {
        resident: r,
        model: r.model,
        loadDurationNs,
        release: async (keepAliveMs: number) => {
          if (released) return
          released = true
          dropInflight()
          r.active--
          r.lastUsed = this.now()
          await this.schedule(r, keepAliveMs)
        },
      }
    } catch (error) {
      if (!released) {
        released = true
        dropInflight()
      }
      throw error
    }
  }

  /** Unloads a model now (when requests still hold it, as soon as they finish). Returns whether it was resident. */
  async unload(record: ModelRecord): Promise<boolean> {
    const r = this.residents.get(nameKey(record.name))
    if (!r) return false
    if (r.active > 0) {
      r.unloadRequested = true
      r.expiresAt = this.now()
      return true
    }
    await this.unloadResident(r)
    return true
  }

  /** Unloads every resident model whose name matches (used by delete). */
  async unloadByName(record: Pick<ModelRecord, 'name'>): Promise<void> {
    const r = this.residents.get(nameKey(record.name))
    if (r && r.active === 0) await this.unloadResident(r)
  }

  async dispose(): Promise<void> {
    for (const r of [...this.residents.values()]) await this.unloadResident(r)
  }

  private async load(record: ModelRecord, kind: ModelKind | undefined): Promise<Resident> {
    if (!record.modelPath) {
      throw new ModelServerError('no_model_layer', `model '${displayName(record.name)}' has no model file`)
    }
    const fileBytes = await stat(record.modelPath).then(
      (s) => s.size,
      () => 0,
    )
    await this.makeRoom(fileBytes, undefined)
    let model: EngineModel
    try {
      model = await this.options.engine.loadModel({
        path: record.modelPath,
        name: displayName(record.name),
        numCtx: numCtxOf(record) ?? this.options.defaultNumCtx,
        kind,
      })
    } catch (error) {
      if (error instanceof ModelServerError) throw error
      if (error && typeof error === 'object' && 'code' in error) throw error
      // The engine's message may name the blob's absolute path; the client reads the model's name instead.
      const reason = String((error as Error)?.message ?? error).split(record.modelPath).join(displayName(record.name)).split('\n')[0]
      throw new ModelServerError('model_load_failed', `failed to load model: ${reason}`, {
        cause: error,
      })
    }
    const key = nameKey(record.name)
    const resident: Resident = {
      key,
      name: displayName(record.name),
      record,
      model,
      lastUsed: this.now(),
      expiresAt: Infinity,
      active: 0,
      timer: undefined,
      unloadRequested: false,
    }
    this.residents.set(key, resident)
    this.options.events?.onLoad?.(resident.name, model.loadDurationNs)
    await this.makeRoom(0, key)
    this.options.events?.onChange?.(this.list())
    return resident
  }

  /** Unloads idle models, least recently used first, until `extra` more bytes fit in the budget. */
  private async makeRoom(extra: number, keep: string | undefined): Promise<void> {
    while (this.totalBytes() + extra > this.options.maxLoadedBytes) {
      const victim = [...this.residents.values()]
        .filter((r) => r.active === 0 && r.key !== keep)
        .sort((a, b) => a.lastUsed - b.lastUsed)[0]
      if (!victim) return
      await this.unloadResident(victim)
    }
  }

  private async schedule(r: Resident, keepAliveMs: number): Promise<void> {
    this.clearTimer(r)
    if (!this.residents.has(r.key)) return
    r.expiresAt = r.unloadRequested ? this.now() : expiry(this.now(), keepAliveMs)
    if (r.active > 0) {
      this.options.events?.onChange?.(this.list())
      return
    }
    if (keepAliveMs <= 0 || r.unloadRequested) {
      await this.unloadResident(r)
      return
    }
    if (keepAliveMs !== Infinity) {
      r.timer = setTimeout(() => {
        r.timer = undefined
        if (r.active === 0 && this.residents.get(r.key) === r) void this.unloadResident(r)
      }, Math.min(keepAliveMs, 2_147_483_647))
      r.timer.unref()
    }
    this.options.events?.onChange?.(this.list())
  }

  private clearTimer(r: Resident): void {
    if (r.timer) clearTimeout(r.timer)
    r.timer = undefined
  }

  private async unloadResident(r: Resident): Promise<void> {
    this.clearTimer(r)
    if (this.residents.get(r.key) !== r) return
    this.residents.delete(r.key)
    try {
      await r.model.unload()
    } finally {
      this.options.events?.onUnload?.(r.name)
      this.options.events?.onChange?.(this.list())
    }
  }
}

function expiry(now: number, keepAliveMs: number): number {
  return keepAliveMs === Infinity ? Infinity : now + keepAliveMs
}

function numCtxOf(record: ModelRecord): number | undefined {
  const v = record.parameters?.num_ctx
  return typeof v === 'number' && v > 0 ? v : undefined
}
