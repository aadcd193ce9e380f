import { BaseError, type BaseErrorParameters } from '../shared/errors/BaseError.js'

/**
 * An error the model server answers with Ollama's body `{error: shortMessage}` and `status`.
 * 4xx for client mistakes, 5xx for our own failures.
 */
export class ModelServerError extends BaseError<string> {
  override name = 'ModelServerError'
  readonly status: number
  constructor(code: string, message: string, status: number, parameters: BaseErrorParameters = {}) {
    super(code, message, parameters)
    this.status = status
  }
}

export function modelNotFound(name: string): ModelServerError {
  return new ModelServerError('model_not_found', `model '${name}' not found`, 404)
}

export function badRequest(message: string): ModelServerError {
  return new ModelServerError('bad_request', message, 400)
}

export function serverBusy(): ModelServerError {
  return new ModelServerError('server_busy', 'server busy, please try again.  maximum pending requests exceeded', 503)
}
