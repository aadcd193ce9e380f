import type { EventSink } from '../catalogue/EventSink.js'
import { isHtmlRequest } from './isHtmlRequest.js'
import { type PublicSet, requiresSession, type SecurityRequirementList } from './PublicSet.js'
import { sanitizeFrom } from './sanitizeFrom.js'

export type GateRequest = {
  /** Raw request path (no query). */
  path: string
  /** Raw path plus query string: what `from` round-trips. */
  url: string
  headers: Record<string, string | string[] | undefined>
  ip: string
}

/** Why the gate stops a request; the gate stage renders it (a redirect, or the `auth_required` refusal). */
export type GateDenial =
  | { kind: 'redirect'; location: string }
  | { kind: 'auth_required'; body: { code: 'auth_required'; from: string } }

export type ArrivalGateParameters = {
  publicSet: PublicSet
  /** Read on every request (`SERVICE_HARD_GATE_ENABLED`). */
  hardGateEnabled: () => boolean
  events: EventSink
  /** `sha256:<hex>` of a client address (keyed; see `createIpHasher`). */
  hashIp: (ip: string) => string
  onRedirect?: () => void
  /** The redirect still happens when its event cannot be written; this hears about it. */
  onEventError?: (error: unknown) => void
}

/**
 * The arrival gate (seed 000 §4.1). Framework-free: the HTTP layer asks `isOpen` for requests without a
 * valid session and, when closed, turns `deny` into a response. Rule 1 (CORS first) is the app's middleware
 * order; rule 3 (a valid session proceeds) is the session check that runs before `isOpen`.
 */
export class ArrivalGate {
  constructor(private readonly parameters: ArrivalGateParameters) {}

  /**
   * Whether a request without a valid session may proceed: listed public paths (rule 2), operations that do
   * not require a session (the public set derived from the document), and — hard gate off — the pre-rollout
   * list (rule 6). `security` is undefined for paths without an operation.
   */
  isOpen(path: string, security: SecurityRequirementList | undefined): boolean {
    const { publicSet, hardGateEnabled } = this.parameters
    if (publicSet.isListedPublic(path)) return true
    if (security !== undefined && !requiresSession(security)) return true
    if (!hardGateEnabled() && publicSet.isPreRolloutPublic(path)) return true
    return false
  }

  /** Rules 4, 5, 7, 8: 302 to the login page for HTML requests (with an event), else the JSON 401. */
  async deny(request: GateRequest): Promise<GateDenial> {
    const from = sanitizeFrom(request.url)
    if (isHtmlRequest(request.headers)) {
      try {
        await this.parameters.events.emit({
          kind: 'auth.gate.redirect',
          payload: { path: request.path, reason: 'no_session', ip_hash: this.parameters.hashIp(request.ip) },
        })
      } catch (error) {
        this.parameters.onEventError?.(error)
      }
      this.parameters.onRedirect?.()
      return { kind: 'redirect', location: `/login?from=${encodeURIComponent(from)}` }
    }
    return { kind: 'auth_required', body: { code: 'auth_required', from } }
  }
}
