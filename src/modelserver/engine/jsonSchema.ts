import type { GbnfJsonSchema } from 'node-llama-cpp'

/**
 * Prepares an Ollama JSON schema (`format` or a tool's `parameters`) for node-llama-cpp's grammar:
 * drops keywords the grammar does not understand (`$schema`, `title`, `examples`...), and, only when
 * `maxStringLength` is given (the tiny models' nudge, read from their GGUF metadata), bounds free strings so a
 * random model cannot loop inside a string forever.
 */
export function toGrammarSchema(schema: unknown, maxStringLength?: number): GbnfJsonSchema {
  return transform(schema, maxStringLength) as GbnfJsonSchema
}

const DROP = new Set(['$schema', '$id', 'title', 'examples', 'default', 'format', 'pattern', 'readOnly', 'writeOnly', 'deprecated'])

/**
 * A schema comes from the request, so property and `$defs` names are user-supplied: the copies have no prototype
 * and every key is defined as an own data property (`__proto__` as a property name stays a property name).
 */
function transform(node: unknown, maxLen: number | undefined): unknown {
  if (Array.isArray(node)) return node.map((n) => transform(n, maxLen))
  if (node === null || typeof node !== 'object') return node
  const out = dictionary()
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (DROP.has(k)) continue
    if ((k === 'properties' || k === '$defs') && v && typeof v === 'object' && !Array.isArray(v)) {
      const named = dictionary()
      for (const [pk, pv] of Object.entries(v as Record<string, unknown>)) define(named, pk, transform(pv, maxLen))
      define(out, k, named)
    } else if (k === 'enum' || k === 'const') {
      define(out, k, v)
    } else {
      define(out, k, transform(v, maxLen))
    }
  }
  const own = (key: string) => (Object.hasOwn(out, key) ? out[key] : undefined)
  const type = own('type')
  const isString = type === 'string' || (Array.isArray(type) && type.includes('string'))
  if (maxLen !== undefined && isString && own('enum') === undefined && own('const') === undefined) {
    const maxLength = own('maxLength')
    const bounded = Math.min(typeof maxLength === 'number' ? maxLength : Infinity, maxLen)
    define(out, 'maxLength', bounded)
    const minLength = own('minLength')
    if (typeof minLength === 'number' && minLength > bounded) define(out, 'minLength', bounded)
  }
  return out
}

function dictionary(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
