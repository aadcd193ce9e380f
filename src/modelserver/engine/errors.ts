import { BaseError } from '../../shared/errors/BaseError.js'
import { modelServerErrorStatus } from '../errors.js'

/**
 * Engine error codes; their statuses are rows of the model server's one error table (`../errors.ts`).
 */
export type EngineErrorCode =
  | 'insert_unsupported'
  | 'thinking_unsupported'
  | 'tools_unsupported'
  | 'vision_unsupported'
  | 'embedding_unsupported'
  | 'completion_unsupported'
  | 'invalid_format'
  | 'invalid_tools'
  | 'invalid_options'
  | 'input_too_long'
  | 'model_load_failed'
  | 'model_unloaded'
  | 'generation_failed'

/** Status of each engine code: its rows of the model server's one error table (`../errors.ts`). */
export const engineErrorStatus: Record<EngineErrorCode, number> = modelServerErrorStatus

/** Every error the engine throws on purpose. `shortMessage` is the text for Ollama's `{error}` body. */
export class EngineError extends BaseError<EngineErrorCode> {
  override name = 'EngineError'
}

export type EngineCapability = 'insert' | 'thinking' | 'tools' | 'vision' | 'embedding' | 'completion'

/**
 * A request needs a capability the model lacks. Messages follow Ollama's wording, the name quoted:
 * `"<model>" does not support insert|tools|vision|thinking|generate|embeddings`.
 */
export class EngineCapabilityError extends EngineError {
  override name = 'EngineCapabilityError'
  readonly capability: EngineCapability
  constructor(capability: EngineCapability, modelName = 'model') {
    super(`${capability}_unsupported`, capabilityMessage(capability, modelName), { meta: { capability } })
    this.capability = capability
  }
}

export function capabilityMessage(capability: EngineCapability, modelName: string): string {
  const name = JSON.stringify(modelName)
  switch (capability) {
    case 'completion':
      return `${name} does not support generate`
    case 'embedding':
      return `${name} does not support embeddings`
    default:
      return `${name} does not support ${capability}`
  }
}

/** Rebuilds an engine error's message with the model name the client sent. */
export function engineErrorMessage(err: EngineError, modelName: string): string {
  if (err instanceof EngineCapabilityError) return capabilityMessage(err.capability, modelName)
  return err.shortMessage
}

export class EngineInputTooLongError extends EngineError {
  override name = 'EngineInputTooLongError'
  constructor(tokens: number, contextLength: number) {
    super('input_too_long', 'input exceeds maximum context length', {
      details: `${tokens} tokens > context ${contextLength}`,
      meta: { tokens, contextLength },
    })
  }
}

export class EngineModelUnloadedError extends EngineError {
  override name = 'EngineModelUnloadedError'
  constructor() {
    super('model_unloaded', 'model was unloaded')
  }
}
