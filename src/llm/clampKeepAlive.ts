import { BaseError } from '../shared/errors/BaseError.js'
import { parseGoDuration } from '../shared/parseGoDuration.js'

/** The operator's bounds on how long a caller may keep a shared model loaded, in seconds. */
export type KeepAliveBounds = { minS: number; maxS: number }

export class KeepAliveError extends BaseError<'invalid_request'> {
  override name = 'KeepAliveError'
}

/**
 * A session caller's `keep_alive`, within the operator's bounds. The models are shared:
 * `0` would unload them for every other caller (who then pays the reload) and `-1` would pin one in memory
 * for good, so a value below the floor becomes the floor and one above the ceiling (forever included) the
 * ceiling. Absent stays absent (the model server's default applies). Sent on as a number of seconds, which
 * every Ollama-compatible server reads the same way. An unreadable duration is the caller's mistake: 400.
 */
export function clampKeepAlive(value: unknown, bounds: KeepAliveBounds): number | undefined {
  if (value === undefined || value === null) return undefined
  const ms = typeof value === 'number' || typeof value === 'string' ? parseGoDuration(value) : undefined
  if (ms === undefined) throw new KeepAliveError('invalid_request', 'keep_alive must be a duration such as "5m" or a number of seconds', { meta: { param: 'keep_alive' } })
  const seconds = ms / 1000
  return Math.min(bounds.maxS, Math.max(bounds.minS, seconds))
}
