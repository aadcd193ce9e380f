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

function transform(node: unknown, maxLen: number | undefined): unknown {
  if (Array.isArray(node)) return node.map((n) => transform(n, maxLen))
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (DROP.has(k)) continue
    if (k === 'properties' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([pk, pv]) => [pk, transform(pv, maxLen)]))
    } else if (k === '$defs' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([pk, pv]) => [pk, transform(pv, maxLen)]))
    } else if (k === 'enum' || k === 'const') {
      out[k] = v
    } else {
      out[k] = transform(v, maxLen)
    }
  }
  const isString = out.type === 'string' || (Array.isArray(out.type) && out.type.includes('string'))
  if (maxLen !== undefined && isString && out.enum === undefined && out.const === undefined) {
    const current = typeof out.maxLength === 'number' ? out.maxLength : Infinity
    out.maxLength = Math.min(current, maxLen)
    if (typeof out.minLength === 'number' && out.minLength > (out.maxLength as number)) out.minLength = out.maxLength
  }
  return out
}
