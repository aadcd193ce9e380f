import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { ModelServerError } from '../errors.js'
import type { ApiKeys } from './ApiKeys.js'

const MESSAGE = 'unauthorized: an API key is required (Authorization: Bearer <key> or x-api-key)'

/**
 * When keys are configured, every route needs one — `Authorization: Bearer <key>` (what the OpenAI and Anthropic
 * SDKs and Ollama clients given headers send) or `x-api-key: <key>` — or the request fails with `invalid_api_key`
 * (401, `WWW-Authenticate`), which the list's on-error answers in the route's error shape like every refusal.
 * Runs after the browser guard, so CORS preflights (which carry no credentials) are still answered; before
 * anything else reads the request.
 */
export function createApiKeyGuard(keys: ApiKeys): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!keys.enabled) return next()
    const key = presentedKey(req)
    if (key !== undefined && keys.matches(key)) return next()
    req.resume()
    next(new ModelServerError('invalid_api_key', MESSAGE, { answer: { headers: { 'www-authenticate': 'Bearer realm="modelserver"' } } }))
  }
}

function presentedKey(req: Request): string | undefined {
  const authorization = req.headers.authorization
  const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined
  if (bearer) return bearer
  const header = req.headers['x-api-key']
  return typeof header === 'string' && header !== '' ? header.trim() : undefined
}
