import { ConfigError } from './ConfigError.js'

/** The environment as read by the config functions (tests pass their own object). */
export type Env = Record<string, string | undefined>

function raw(env: Env, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

export function envString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback
}

export function envOptionalString(env: Env, name: string): string | undefined {
  return raw(env, name)
}

export function envInt(env: Env, name: string, fallback: number, { min = -Infinity, max = Infinity } = {}): number {
  const value = raw(env, name)
  if (value === undefined) return fallback
  if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer (got "${value}")`)
  const n = Number(value)
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${n})`)
  return n
}

const truthy = new Set(['1', 'true', 'yes', 'on'])
const falsy = new Set(['0', 'false', 'no', 'off'])

export function envBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)
  if (value === undefined) return fallback
  const v = value.toLowerCase()
  if (truthy.has(v)) return true
  if (falsy.has(v)) return false
  throw new ConfigError(name, `must be 1 or 0 (got "${value}")`)
}

export function envEnum<const T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = raw(env, name)
  if (value === undefined) return fallback
  if (!(values as readonly string[]).includes(value)) throw new ConfigError(name, `must be one of ${values.join(', ')} (got "${value}")`)
  return value as T
}

/** An http(s) URL; returned without a trailing slash. */
export function envHttpUrl(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${value}")`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must use http or https (got "${value}")`)
  return value.replace(/\/+$/, '')
}

/** A comma-separated list of http(s) URLs (at least one; duplicates refused), each without a trailing slash. */
export function envHttpUrlList(env: Env, name: string, fallback: string): string[] {
  const items = (raw(env, name) ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (items.length === 0) throw new ConfigError(name, 'must name at least one URL')
  const urls = items.map((item) => envHttpUrl({ [name]: item }, name, fallback))
  const duplicate = urls.find((u, i) => urls.indexOf(u) !== i)
  if (duplicate) throw new ConfigError(name, `lists ${duplicate} twice`)
  return urls
}

/** A comma-separated list. */
export function envList(env: Env, name: string, fallback: string[]): string[] {
  const value = raw(env, name)
  if (value === undefined) return fallback
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}
