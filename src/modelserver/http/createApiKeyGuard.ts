import { anthropicErrorBody } from '../anthropic/anthropicError.js'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { HttpResult } from '../../shared/http/index.js'
import type { ErrorShape } from '../errorShapes.js'
import { openaiErrorBody } from '../openai/openaiError.js'
import { ociError } from '../registry/ociErrors.js'
import { modelServerErrorStatus } from '../errors.js'
import type { ApiKeys } from './ApiKeys.js'

/**
 * When keys are configured, every route needs one — `Authorization: Bearer <key>` (what the OpenAI and Anthropic
 * SDKs and Ollama clients given headers send) or `x-api-key: <key>` — or gets 401 in the route's error shape
 * (`unauthorized` answers it). Runs after the browser guard, so CORS preflights (which carry no credentials) are
 * still answered; before anything else reads the request.
 */
export function createApiKeyGuard(keys: ApiKeys, unauthorized: (req: Request, res: Response) => void): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!keys.enabled) return next()
    const key = presentedKey(req)
    if (key !== undefined && keys.matches(key)) return next()
    req.resume()
    res.setHeader('www-authenticate', 'Bearer realm="modelserver"')
    unauthorized(req, res)
  }
}

function presentedKey(req: Request): string | undefined {
  const authorization = req.headers.authorization
  const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined
  if (bearer) return bearer
  const header = req.headers['x-api-key']
  return typeof header === 'string' && header !== '' ? header.trim() : undefined
}

/** The 401 in the route's error shape (what the document declares for it): Ollama's `{error}`, OpenAI's, the OCI one. */
export function unauthorizedAnswer(shape: ErrorShape): HttpResult & { component: string } {
  const message = 'unauthorized: an API key is required (Authorization: Bearer <key> or x-api-key)'
  const status = modelServerErrorStatus.unauthorized
  if (shape === 'openai') return { status, body: openaiErrorBody(status, message, 'invalid_api_key'), component: 'OpenAIError' }
  if (shape === 'oci') return { ...ociError('UNAUTHORIZED', {}), component: 'RegistryError' }
  if (shape === 'anthropic') return { status, body: anthropicErrorBody(status, message), component: 'AnthropicError' }
  return { status, body: { error: message }, component: 'Error' }
}
