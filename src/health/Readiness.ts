import type { CapabilityMonitor, CapabilityStatus } from './CapabilityMonitor.js'

/** This replica's own phase: `starting` until its background work has started, then `ready`, `draining` from the stop signal on. */
export type ReplicaPhase = 'ready' | 'starting' | 'draining'

/** `GET /health/ready`'s `status`: the phase, or `not_ready` while a required capability is not up. */
export type ReadinessStatus = ReplicaPhase | 'not_ready'

/** Which capabilities must be up for `ready`: every configured one (`all`), none (`none`: the phase only), or these. */
export type ReadinessRequirement = 'all' | 'none' | readonly string[]

export type ReadinessReport = { status: ReadinessStatus; capabilities: Record<string, CapabilityStatus> }

/**
 * Whether this replica takes new work. Its own phase (`starting` → `ready` → `draining`, for good: a draining
 * replica exits) and, once it watches a `CapabilityMonitor`, each capability it needs: not ready while a
 * configured capability is down or not yet checked. A capability that is not configured never holds readiness
 * back. The balancer asks through `GET /health/ready` (docs/configuration.md, "Health and readiness", says how a
 * balancer keeps serving when a dependency every replica shares is down).
 */
export class Readiness {
  #phase: ReplicaPhase = 'starting'
  #monitor: CapabilityMonitor | undefined

  /** Background work is running: ready (unless already draining). */
  started(): void {
    if (this.#phase === 'starting') this.#phase = 'ready'
  }

  /** The stop signal: not ready from now on. */
  drain(): void {
    this.#phase = 'draining'
  }

  /** Readiness also waits for these capabilities. */
  watch(monitor: CapabilityMonitor): void {
    this.#monitor = monitor
  }

  /** The replica's own phase. */
  get phase(): ReplicaPhase {
    return this.#phase
  }

  /** The capability names readiness knows (to refuse an unknown name in a requirement). */
  get capabilityNames(): string[] {
    return this.#monitor?.names ?? []
  }

  /** The answer to a readiness probe that requires `requirement`. */
  report(requirement: ReadinessRequirement = 'all'): ReadinessReport {
    const capabilities: Record<string, CapabilityStatus> = {}
    const holding: string[] = []
    for (const [name, state] of this.#monitor?.states() ?? []) {
      capabilities[name] = state.status
      const required = requirement === 'all' || (requirement !== 'none' && requirement.includes(name))
      if (required && (state.status === 'down' || state.status === 'unknown')) holding.push(name)
    }
    const status: ReadinessStatus = this.#phase !== 'ready' ? this.#phase : holding.length > 0 ? 'not_ready' : 'ready'
    return { status, capabilities }
  }
}
