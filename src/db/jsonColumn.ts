/** A value as the text of a JSON column; bigints (atomic amounts) become decimal strings, never lossy numbers. */
export function jsonColumn(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v))
}
