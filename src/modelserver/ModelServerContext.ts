import type { Engine, ModelInfo } from './engine/Engine.js'
import { EngineError, engineErrorMessage } from './engine/errors.js'
import type { ModelServerConfig } from './config.js'
import { ModelServerError, badRequest, modelNotFound } from './errors.js'
import type { ModelServerMetrics } from './metrics/ModelServerMetrics.js'
import type { ResidencyManager } from './residency/ResidencyManager.js'
import { parseModelName } from './store/ModelName.js'
import type { ModelRecord, ModelStore } from './store/ModelStore.js'

/** Everything a handler needs; built once by `createModelServer`. */
export type ModelServerContext = {
  config: ModelServerConfig
  engine: Engine
  store: ModelStore
  residency: ResidencyManager
  metrics: ModelServerMetrics
  /** When `createModelServer` built this server (`/api/status`). */
  startedAt: Date
  /** GGUF metadata by model blob digest (read once, without loading weights). */
  inspect(record: ModelRecord): Promise<ModelInfo>
  /** The installed model for a request's name; 400 for a missing/malformed name, 404 when not installed. */
  findModel(name: unknown): Promise<ModelRecord>
}

export function createInspector(engine: Engine): (record: ModelRecord) => Promise<ModelInfo> {
  const cache = new Map<string, Promise<ModelInfo>>()
  return (record) => {
    if (!record.modelPath || !record.modelDigest) {
      return Promise.reject(new ModelServerError('no_model_layer', 'model has no model file'))
    }
    let p = cache.get(record.modelDigest)
    if (!p) {
      p = engine.inspect(record.modelPath)
      cache.set(record.modelDigest, p)
      p.catch(() => cache.delete(record.modelDigest!))
    }
    return p
  }
}

export function createFindModel(store: ModelStore): (name: unknown) => Promise<ModelRecord> {
  return async (name) => {
    if (typeof name !== 'string' || name.trim() === '') throw badRequest('model is required')
    const entry = await store.get(parseModelName(name))
    if (!entry) throw modelNotFound(name)
    try {
      return await store.resolve(entry)
    } catch (error) {
      // Deleted (manifest and blobs) between the lookup and the read: not installed any more.
      if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') throw modelNotFound(name)
      throw error
    }
  }
}

/** Engine errors as the `{error}` Ollama sends, with the client's model name in capability messages. */
export function toModelServerError(error: unknown, modelName: string): unknown {
  if (error instanceof EngineError) {
    return new ModelServerError(error.code, engineErrorMessage(error, modelName), {
      cause: error,
    })
  }
  return error
}
