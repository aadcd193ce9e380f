/**
 * How large a `format` JSON schema may be. Its grammar is built on the event loop, in time that grows with the
 * square of its enum values (100,000 of them held every request of the server for 29 s), so a schema past these
 * bounds is refused (400 `invalid_format`) before anything is built. The bounds are those of OpenAI's structured
 * outputs — 1,000 enum values in all — and a schema text far beyond any real one.
 */
export const MAX_FORMAT_SCHEMA_BYTES = 64 * 1024
export const MAX_FORMAT_ENUM_VALUES = 1_000
/** Compiled grammars kept per loaded model (each is memory of its own until the model unloads). */
export const MAX_CACHED_GRAMMARS = 64

/** Why `format` (its JSON text `text`) is too large to build a grammar for, or undefined. */
export function formatTooBig(text: string, format: object): string | undefined {
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_FORMAT_SCHEMA_BYTES) return `format schema is ${bytes} bytes; at most ${MAX_FORMAT_SCHEMA_BYTES}`
  const values = enumValues(format)
  if (values > MAX_FORMAT_ENUM_VALUES) return `format schema has ${values} enum values; at most ${MAX_FORMAT_ENUM_VALUES} in all`
  return undefined
}

/** Enum and const values over the whole schema (its nesting is already bounded by the body's depth limit). */
function enumValues(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((n: number, item) => n + enumValues(item), 0)
  if (node === null || typeof node !== 'object') return 0
  let n = 0
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' && Array.isArray(value)) n += value.length
    else if (key === 'const') n += 1
    else n += enumValues(value)
  }
  return n
}
