/** `GET /health/ready`'s answer (the document's `Readiness.status`). */
export type ReadinessStatus = 'ready' | 'starting' | 'draining'

/**
 * Whether this replica takes new work (issue 28): `starting` until its background work has started, `ready`
 * then, `draining` from the stop signal on (for good: a draining replica exits). The balancer reads it through
 * `GET /health/ready` and sends new work elsewhere. It is this replica's own state only: the database is shared
 * by every replica, so a database check here would fail on all of them at once (seen under load: a slow probe
 * marked the last replica down and the balancer answered 503 to everyone); `GET /health/detailed` checks it.
 */
export class Readiness {
  #phase: ReadinessStatus = 'starting'

  /** Background work is running: ready (unless already draining). */
  started(): void {
    if (this.#phase === 'starting') this.#phase = 'ready'
  }

  /** The stop signal: not ready from now on. */
  drain(): void {
    this.#phase = 'draining'
  }

  get status(): ReadinessStatus {
    return this.#phase
  }
}
