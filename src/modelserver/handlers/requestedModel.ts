import { badRequest } from '../errors.js'

/**
 * The model a show, create, delete, pull or push body names: `model`, else older clients' `name`. As Ollama picks
 * (`cmp.Or` of Go strings, where `null` and absence decode to `""`), an empty one is the other one's turn.
 */
export function requestedModel(body: { model?: string | null | undefined; name?: string | null | undefined }): string {
  const name = body.model || body.name
  if (!name) throw badRequest('model is required')
  return name
}
