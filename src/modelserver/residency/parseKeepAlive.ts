import { parseGoDuration } from '../../shared/parseGoDuration.js'
import { badRequest } from '../errors.js'

/** Milliseconds; `Infinity` = stay loaded; `0` = unload as soon as the request is done. */
export type KeepAliveMs = number

/**
 * Ollama's `keep_alive`: a Go duration string (`5m`, `1h30m`, `0.5s`), a number of seconds, 0 (unload now)
 * or a negative value (forever). Numeric strings count as seconds. Throws 400 on anything else.
 */
export function parseKeepAlive(value: unknown, fallbackMs: KeepAliveMs): KeepAliveMs {
  if (value === undefined || value === null) return fallbackMs
  if (typeof value !== 'number' && typeof value !== 'string') throw badRequest('keep_alive must be a duration string or a number of seconds')
  if (typeof value === 'string' && value.trim() === '') return fallbackMs
  const ms = parseGoDuration(value)
  if (ms === undefined) throw badRequest(typeof value === 'number' ? `invalid keep_alive ${String(value)}` : `time: invalid duration "${value}"`)
  return ms
}
