/**
 * The gate's public set, derived from the OpenAPI document (design.md, seed 000 §4.1 rule 2):
 * - an operation is public when one of its security requirements does not need a session — neither
 *   `sessionToken` nor its GET/HEAD cookie alternative `sessionCookie` (`security: []`,
 *   `[{overlordBearer: []}]`, `[{}, {x402Payment: []}]`…);
 * - paths without an operation are public when they equal an `x-public-exact-paths` entry or start with an
 *   `x-public-prefixes` entry (static assets, `/doc/`, `/cms-json/`…);
 * - with the hard gate off, `x-pre-rollout-public-paths` / `x-pre-rollout-public-prefixes` are public as well.
 */
export type SecurityRequirementList = ReadonlyArray<Record<string, readonly string[]>>

export const SESSION_SCHEME = 'sessionToken'
/** The `svc_session` cookie: the same session, accepted on GET/HEAD only (an alternative to the header). */
export const SESSION_COOKIE_SCHEME = 'sessionCookie'
/** `/llm/v1`: the session token or an `/llm` API key as `Authorization: Bearer` (a session by another name). */
export const LLM_BEARER_SCHEME = 'llmBearer'
/** `/llm/v1/messages` and `/llm/v1/responses`: the same credentials in `x-api-key` (the Anthropic SDKs' header). */
export const LLM_API_KEY_SCHEME = 'llmApiKey'
const SESSION_SCHEMES: readonly string[] = [SESSION_SCHEME, SESSION_COOKIE_SCHEME, LLM_BEARER_SCHEME, LLM_API_KEY_SCHEME]
/**
 * The overlord bearer as an alternative on a session operation (seed 000 §4.2: the overlord gets 200 on
 * session and cost routes): it does not make the operation public — `[{overlordBearer: []}]` alone does.
 */
const SESSION_ALTERNATIVES: readonly string[] = ['overlordBearer']

/**
 * True when the operation needs a session: some requirement is a session one, and every requirement is a
 * session one or an alternative that stands in for it (`[{sessionToken: []}, {overlordBearer: []}]`).
 */
export function requiresSession(security: SecurityRequirementList): boolean {
  if (security.length === 0) return false
  const isSession = (requirement: Record<string, readonly string[]>) => SESSION_SCHEMES.some((scheme) => scheme in requirement)
  if (!security.some(isSession)) return false
  return security.every(
    (requirement) => isSession(requirement) || (Object.keys(requirement).length > 0 && Object.keys(requirement).every((s) => SESSION_ALTERNATIVES.includes(s))),
  )
}

export type PublicSetLists = {
  exact: string[]
  prefixes: string[]
  preRolloutExact: string[]
  preRolloutPrefixes: string[]
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

export function publicSetFromDocument(document: Record<string, unknown>): PublicSetLists {
  return {
    exact: stringList(document['x-public-exact-paths']),
    prefixes: stringList(document['x-public-prefixes']),
    preRolloutExact: stringList(document['x-pre-rollout-public-paths']),
    preRolloutPrefixes: stringList(document['x-pre-rollout-public-prefixes']),
  }
}

function matches(path: string, exact: string[], prefixes: string[]): boolean {
  const withSlash = path.endsWith('/') ? path : `${path}/`
  const withoutSlash = path.length > 1 ? path.replace(/\/+$/, '') : path
  if (exact.includes(path) || exact.includes(withoutSlash)) return true
  // `/autocore/` also covers `/autocore` (trailing slashes are not significant for routing).
  return prefixes.some((prefix) => path.startsWith(prefix) || withSlash === prefix)
}

export class PublicSet {
  constructor(private readonly lists: PublicSetLists) {}

  /** Public by the listed paths (rule 2), independent of any operation. */
  isListedPublic(path: string): boolean {
    return matches(path, this.lists.exact, this.lists.prefixes)
  }

  /** Public only while the hard gate is off (rule 6). */
  isPreRolloutPublic(path: string): boolean {
    return matches(path, this.lists.preRolloutExact, this.lists.preRolloutPrefixes)
  }
}
