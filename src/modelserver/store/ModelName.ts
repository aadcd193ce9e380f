import { ModelServerError } from '../errors.js'

/** Ollama's defaults for the parts a short name leaves out. */
export const DEFAULT_REGISTRY_HOST = 'registry.ollama.ai'
export const DEFAULT_NAMESPACE = 'library'
export const DEFAULT_TAG = 'latest'

/** A fully qualified model name: `host/namespace/model:tag`. */
export type ModelName = {
  host: string
  namespace: string
  model: string
  tag: string
}

const hostPattern = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$/
const partPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/
const tagPattern = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,79}$/

/**
 * Parses and normalises a model name as Ollama does: `name` → `registry.ollama.ai/library/name:latest`,
 * `ns/name:tag` → `registry.ollama.ai/ns/name:tag`, `host[:port]/ns/name:tag` addresses another registry.
 * A `@sha256:` suffix is ignored. Throws a 400 for a malformed name.
 */
export function parseModelName(input: string): ModelName {
  let text = input.trim()
  const at = text.indexOf('@')
  if (at >= 0) text = text.slice(0, at)
  // A scheme is tolerated (`http://host/ns/name`) and dropped, as Ollama does.
  text = text.replace(/^[a-z]+:\/\//i, '')
  const parts = text.split('/')
  if (parts.length === 0 || parts.length > 3 || parts.some((p) => p === '')) throw invalidName(input)
  const last = parts[parts.length - 1]!
  const colon = last.lastIndexOf(':')
  const model = colon >= 0 ? last.slice(0, colon) : last
  const tag = colon >= 0 ? last.slice(colon + 1) : DEFAULT_TAG
  const namespace = parts.length >= 2 ? parts[parts.length - 2]! : DEFAULT_NAMESPACE
  const host = parts.length === 3 ? parts[0]! : DEFAULT_REGISTRY_HOST
  if (!hostPattern.test(host) || !partPattern.test(namespace) || !partPattern.test(model) || !tagPattern.test(tag)) {
    throw invalidName(input)
  }
  // Hosts and namespaces/models compare case-insensitively in Ollama; keep the model's case but fold the host.
  return { host: host.toLowerCase(), namespace, model, tag }
}

function invalidName(input: string): ModelServerError {
  return new ModelServerError('invalid_model_name', `invalid model name '${input}'`)
}

/** `host/namespace/model:tag`. */
export function fullName(name: ModelName): string {
  return `${name.host}/${name.namespace}/${name.model}:${name.tag}`
}

/** The name Ollama displays: the default host and `library` namespace (in any case, as Ollama compares them) are left out. */
export function displayName(name: ModelName): string {
  if (name.host === DEFAULT_REGISTRY_HOST) {
    if (name.namespace.toLowerCase() === DEFAULT_NAMESPACE) return `${name.model}:${name.tag}`
    return `${name.namespace}/${name.model}:${name.tag}`
  }
  return fullName(name)
}

/** Case-insensitive identity key (Ollama treats names case-insensitively on disk). */
export function nameKey(name: ModelName): string {
  return fullName(name).toLowerCase()
}
