import { ShadowError } from '../overlord/ShadowError.js'

/**
 * Challenge scopes and the parameters bound into each (docs/design.md, "Shadow challenges"). The order of
 * `params` is the order of the `<name>: <value>` lines in the challenge message.
 */
export const SHADOW_SCOPES = {
  auth: [],
  'cabinet.provision': ['company'],
  'cabinet.clear': ['company', 'confirm'],
  'vault.sign': ['agent_id', 'message_sha256'],
  'release.key': ['agent_id', 'confirm'],
} as const satisfies Record<string, readonly string[]>

export type ShadowScope = keyof typeof SHADOW_SCOPES
export type BoundParams = Record<string, string>

export const COMPANY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
/** Any vault agent id (`company:<COMPANY>:cabinet:<role>` for members): 1-256 characters, no whitespace. */
export const AGENT_ID_PATTERN = /^[^\s]{1,256}$/u
export const SHA256_HEX_PATTERN = /^0x[0-9a-f]{64}$/
export const RELEASE_CONFIRM = 'RELEASE-PRIVATE-KEY'

export function clearConfirmFor(company: string): string {
  return `DESTROY-${company}-CABINET`
}

export function isShadowScope(value: unknown): value is ShadowScope {
  return typeof value === 'string' && Object.hasOwn(SHADOW_SCOPES, value)
}

/**
 * Validates and normalises the params of a challenge request: every bound parameter present, a string and
 * well formed, no extra keys; `message_sha256` lower-cased; `confirm` must be the scope's literal
 * (400 `confirm_mismatch`). Returns the params with keys in the scope's order.
 */
export function normaliseBoundParams(scope: unknown, params: unknown): { scope: ShadowScope; params: BoundParams } {
  if (!isShadowScope(scope)) throw new ShadowError('invalid_scope', `Unknown scope; expected one of ${Object.keys(SHADOW_SCOPES).join(', ')}.`)
  const input = params ?? {}
  if (typeof input !== 'object' || Array.isArray(input)) throw new ShadowError('invalid_params', 'params must be an object.')
  const names: readonly string[] = SHADOW_SCOPES[scope]
  const extra = Object.keys(input).filter((k) => !names.includes(k))
  if (extra.length > 0) throw new ShadowError('invalid_params', `Scope ${scope} does not bind: ${extra.join(', ')}.`)
  const out: BoundParams = {}
  for (const name of names) {
    const value = (input as Record<string, unknown>)[name]
    if (typeof value !== 'string' || value.length === 0) {
      throw new ShadowError('invalid_params', `Scope ${scope} requires the string parameter ${name}.`)
    }
    out[name] = normaliseParam(name, value)
  }
  if (scope === 'cabinet.clear' && out.confirm !== clearConfirmFor(out.company!)) {
    throw new ShadowError('confirm_mismatch', 'confirm must be DESTROY-<COMPANY>-CABINET for the bound company.')
  }
  if (scope === 'release.key' && out.confirm !== RELEASE_CONFIRM) {
    throw new ShadowError('confirm_mismatch', `confirm must be ${RELEASE_CONFIRM}.`)
  }
  return { scope, params: out }
}

function normaliseParam(name: string, value: string): string {
  switch (name) {
    case 'company':
      if (!COMPANY_PATTERN.test(value)) throw new ShadowError('invalid_params', 'company must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$.')
      return value
    case 'agent_id':
      if (!AGENT_ID_PATTERN.test(value)) throw new ShadowError('invalid_params', 'agent_id must be 1-256 characters without whitespace.')
      return value
    case 'message_sha256': {
      const lower = value.toLowerCase()
      if (!SHA256_HEX_PATTERN.test(lower)) throw new ShadowError('invalid_params', 'message_sha256 must be 0x followed by 64 hex characters.')
      return lower
    }
    default:
      if (/[\r\n]/.test(value) || value.length > 200) throw new ShadowError('invalid_params', `${name} must be a single line.`)
      return value
  }
}
