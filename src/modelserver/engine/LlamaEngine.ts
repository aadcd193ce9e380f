import type { Engine } from './Engine.js'
import type { CreateEngineParams } from './createEngine.js'

// Placeholder until the implementation is committed.
export class LlamaEngine {
  static async create(_params: CreateEngineParams): Promise<Engine> {
    throw new Error('LlamaEngine not implemented yet')
  }
}
