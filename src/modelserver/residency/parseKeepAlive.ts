import { badRequest } from '../errors.js'

/** Milliseconds; `Infinity` = stay loaded; `0` = unload as soon as the request is done. */
export type KeepAliveMs = number

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * Ollama's `keep_alive`: a Go duration string (`5m`, `1h30m`, `0.5s`), a number of seconds, 0 (unload now)
 * or a negative value (forever). Numeric strings count as seconds. Throws 400 on anything else.
 */
export function parseKeepAlive(value: unknown, fallbackMs: KeepAliveMs): KeepAliveMs {
  if (value === undefined || value === null) return fallbackMs
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw badRequest(`invalid keep_alive ${String(value)}`)
    return value < 0 ? Infinity : value * 1000
  }
  if (typeof value !== 'string') throw badRequest('keep_alive must be a duration string or a number of seconds')
  const text = value.trim()
  if (text === '') return fallbackMs
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return parseKeepAlive(Number(text), fallbackMs)
  const match = /^(-?)((?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text)
  if (!match) throw badRequest(`time: invalid duration "${value}"`)
  let ms = 0
  for (const part of match[2]!.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|μs|ms|s|m|h)/g)) {
    ms += Number(part[1]) * unitMs[part[2]!]!
  }
  if (match[1] === '-') return ms === 0 ? 0 : Infinity
  return ms
}
