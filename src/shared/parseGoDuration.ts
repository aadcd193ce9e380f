const unitMs = new Map<string, number>([
  ['ns', 1e-6],
  ['us', 1e-3],
  ['µs', 1e-3],
  ['μs', 1e-3],
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
])

/** Go's longest `time.Duration` (2^63 − 1 ns, about 292 years), in milliseconds: past it Go refuses the duration. */
export const MAX_GO_DURATION_MS = 9_223_372_036_854.775

/**
 * Ollama's duration (its `keep_alive`): a Go duration string (`5m`, `1h30m`, `0.5s`), a number of seconds or a
 * numeric string of seconds, in milliseconds. A negative value is `Infinity` (Ollama reads it as "forever");
 * `undefined` when the value is not a duration, or a positive one longer than Go's longest (no date can be
 * that far: an expiry there breaks every later listing).
 */
export function parseGoDuration(value: number | string): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined
    if (value < 0) return Infinity
    return value * 1000 > MAX_GO_DURATION_MS ? undefined : value * 1000
  }
  const text = value.trim()
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return parseGoDuration(Number(text))
  const match = /^(-?)((?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text)
  if (!match) return undefined
  let ms = 0
  for (const part of match[2]!.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(part[1]) * unitMs.get(part[2]!)!
  if (match[1] === '-') return ms === 0 ? 0 : Infinity
  return ms > MAX_GO_DURATION_MS ? undefined : ms
}
