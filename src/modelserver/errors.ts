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

/**
 * What a client may read of an error: the short message of an error we raise on purpose (written for clients), a
 * generic text for anything else (a file-system error names absolute paths; its details go to the server log).
 */
export function publicMessage(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage
  return INTERNAL_ERROR_MESSAGE
}

export const INTERNAL_ERROR_MESSAGE = 'internal error'

/**
 * Replaces the server's directories (models, working, temporary, home) in a client-bound message with a
 * placeholder, longest first: a last line of defence for messages that embed text from a library.
 */
export function createPathRedactor(roots: ReadonlyArray<string | undefined>): (text: string) => string {
  const paths = [...new Set(roots.filter((r): r is string => typeof r === 'string' && r.length > 1))].sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const p of paths) if (out.includes(p)) out = out.split(p).join('<server path>')
    return out
  }
}
