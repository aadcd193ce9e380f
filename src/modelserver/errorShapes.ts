import { followLocalRefs as resolve, objectAt } from '../shared/http/localRefs.js'

/** The error bodies the model server answers in: Ollama's `{error}`, OpenAI's `{error: {message, type, …}}`, the OCI registry's `{errors: […]}`, Anthropic's `{type: "error", error: {type, message}}`. */
export type ErrorShape = 'ollama' | 'openai' | 'oci' | 'anthropic'

/** The document's error schemas and the shape each one is. */
const SHAPE_OF_SCHEMA = new Map<string, ErrorShape>([
  ['#/components/schemas/Error', 'ollama'],
  ['#/components/schemas/OpenAIError', 'openai'],
  ['#/components/schemas/RegistryError', 'oci'],
  ['#/components/schemas/AnthropicError', 'anthropic'],
])

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const isErrorStatus = (key: string) => key === 'default' || /^[45](\d\d|XX)$/i.test(key)

type Json = Record<string, unknown>

/**
 * Which error shape each operation answers in, read from what the document declares for it: the schema of its
 * error responses (4xx, 5xx, `default`). An operation that declares no error body (a HEAD, or `registryCheck`
 * with its empty 403) answers in the one shape declared on its path and the paths below it (a registry HEAD as
 * its GET, `/v2` as the registry under it); failing that, Ollama's, the server's own. An operation that
 * declares two shapes is a document error, refused at start.
 */
export function errorShapesOf(document: Json): (operationId: string | undefined) => ErrorShape {
  const shapes = new Map<string, ErrorShape>()
  const declaredOnPath = new Map<string, Set<ErrorShape>>()
  const undeclared: { operationId: string; path: string }[] = []
  for (const [path, pathItem] of Object.entries(objectAt(document.paths) ?? {})) {
    for (const method of METHODS) {
      const operation = objectAt(objectAt(pathItem)?.[method])
      const operationId = operation?.operationId
      if (typeof operationId !== 'string') continue
      const declared = new Set<ErrorShape>()
      for (const [status, response] of Object.entries(objectAt(operation?.responses) ?? {})) {
        if (!isErrorStatus(status)) continue
        for (const media of Object.values(objectAt(resolve(document, response)?.content) ?? {})) {
          const ref = objectAt(objectAt(media)?.schema)?.$ref
          const shape = typeof ref === 'string' ? SHAPE_OF_SCHEMA.get(ref) : undefined
          if (shape) declared.add(shape)
        }
      }
      if (declared.size > 1) throw new Error(`${operationId} declares error bodies of more than one shape (${[...declared].join(', ')})`)
      const [shape] = declared
      if (!shape) {
        undeclared.push({ operationId, path })
        continue
      }
      shapes.set(operationId, shape)
      declaredOnPath.set(path, (declaredOnPath.get(path) ?? new Set()).add(shape))
    }
  }
  for (const { operationId, path } of undeclared) {
    const around = new Set<ErrorShape>()
    for (const [other, found] of declaredOnPath) if (other === path || other.startsWith(`${path}/`)) for (const shape of found) around.add(shape)
    shapes.set(operationId, around.size === 1 ? [...around][0]! : 'ollama')
  }
  return (operationId) => (operationId === undefined ? undefined : shapes.get(operationId)) ?? 'ollama'
}
