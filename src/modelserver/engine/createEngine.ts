import type { Engine } from './Engine.js'

export type CreateEngineParams = {
  /** CPU threads for llama.cpp; default `MODELSERVER_THREADS` or `defaultThreadCount()` (cores - 1, between 1 and 4). */
  threads?: number | undefined
}

/** One per process. Implementation lands in LlamaEngine.ts. */
export async function createEngine(params: CreateEngineParams = {}): Promise<Engine> {
  const { LlamaEngine } = await import('./LlamaEngine.js')
  return LlamaEngine.create(params)
}
