import { BaseError } from '../../shared/errors/BaseError.js'

/**
 * Engine error codes. The server maps: `*_unsupported`, `invalid_*`, `input_too_long` → 400;
 * `model_load_failed`, `model_unloaded`, `generation_failed` → 500.
 */
export type EngineErrorCode =
  | 'insert_unsupported'
  | 'thinking_unsupported'
  | 'tools_unsupported'
  | 'vision_unsupported'
  | 'embedding_unsupported'
  | 'completion_unsupported'
  | 'invalid_format'
  | 'invalid_options'
  | 'input_too_long'
  | 'model_load_failed'
  | 'model_unloaded'
  | 'generation_failed'

/** Status the HTTP layer should use for an engine error code (Ollama semantics). */
export const engineErrorStatus: Record<EngineErrorCode, 400 | 500> = {
  insert_unsupported: 400,
  thinking_unsupported: 400,
  tools_unsupported: 400,
  vision_unsupported: 400,
  embedding_unsupported: 400,
  completion_unsupported: 400,
  invalid_format: 400,
  invalid_options: 400,
  input_too_long: 400,
  model_load_failed: 500,
  model_unloaded: 500,
  generation_failed: 500,
}

/**
 * `shortMessage` is the exact text for Ollama's `{error}` body. Ollama uses the model name the client
 * sent ("<model> does not support insert"); the engine does not know that name, so `modelName` is
 * passed in when known and the server may rebuild the message with `engineErrorMessage(err, name)`.
 */
export class EngineError extends BaseError<EngineErrorCode> {
  override name = 'EngineError'
}

export class EngineCapabilityError extends EngineError {
  override name = 'EngineCapabilityError'
  readonly capability: 'insert' | 'thinking' | 'tools' | 'vision' | 'embedding' | 'completion'
  constructor(capability: EngineCapabilityError['capability'], modelName = 'model') {
    super(`${capability}_unsupported`, `${JSON.stringify(modelName).slice(1, -1)} does not support ${capability}`, {
      meta: { capability },
    })
    this.capability = capability
  }
}

/** Rebuilds a capability error's message with the client's model name (Ollama: `"x" does not support insert`). */
export function engineErrorMessage(err: EngineError, modelName: string): string {
  if (err instanceof EngineCapabilityError) return `${modelName} does not support ${err.capability}`
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
