/**
 * `up`: its last check passed. `down`: its last two checks failed. `unknown`: not checked yet, or one check failed
 * after none passed (one more decides). `not_configured`: deliberately off (its settings are unset), never checked.
 */
export type CapabilityStatus = 'up' | 'down' | 'unknown' | 'not_configured'

/** A capability of this gateway: `check` resolves when it works and throws saying why not; none: not configured. */
export type Capability = { name: string; check?: (() => Promise<unknown>) | undefined }

export type CapabilityState = { status: CapabilityStatus; detail?: string }

export type CapabilityMonitorParameters = {
  capabilities: readonly Capability[]
  /** A round of checks every this many ms. */
  intervalMs: number
  /** A check slower than this failed. */
  timeoutMs: number
  /** Failed checks in a row before a capability that was up (or never checked) is down. Default 2. */
  failuresBeforeDown?: number
  /** A capability changed status (the detail is for the operator's log, never for a public answer). */
  onChange?: (name: string, state: CapabilityState, previous: CapabilityStatus) => void
}

type Tracked = { capability: Capability; state: CapabilityState; failures: number; running: boolean }

/**
 * Checks each configured capability of this gateway in the background, every `intervalMs`, so a readiness probe
 * reads the last results at once and never waits on a dependency (a balancer probes every replica twice a
 * second; the dependencies see one check per interval per replica). One slow or failed check does not flip a
 * capability: it is down after `failuresBeforeDown` failures in a row, up again after one pass. A check still
 * running when the next round comes is not started twice.
 */
export class CapabilityMonitor {
  readonly #tracked: Tracked[]
  readonly #p: CapabilityMonitorParameters
  #timer: NodeJS.Timeout | undefined

  constructor(p: CapabilityMonitorParameters) {
    this.#p = p
    this.#tracked = p.capabilities.map((capability) => ({
      capability,
      state: { status: capability.check ? 'unknown' : 'not_configured' },
      failures: 0,
      running: false,
    }))
  }

  /** The capabilities by name, in the order given. */
  get names(): string[] {
    return this.#tracked.map((t) => t.capability.name)
  }

  /** Checks every configured capability now, then every interval until `stop`. */
  start(): void {
    if (this.#timer) return
    void this.checkAll()
    this.#timer = setInterval(() => void this.checkAll(), this.#p.intervalMs)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  /** One round: each configured capability not already being checked. Resolves when the round is done. */
  async checkAll(): Promise<void> {
    await Promise.all(this.#tracked.filter((t) => t.capability.check && !t.running).map((t) => this.#checkOne(t)))
  }

  /** Each capability's status, by name, in the order given. */
  states(): Map<string, CapabilityState> {
    return new Map(this.#tracked.map((t) => [t.capability.name, { ...t.state }]))
  }

  async #checkOne(t: Tracked): Promise<void> {
    t.running = true
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        t.capability.check!(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.#p.timeoutMs} ms`)), this.#p.timeoutMs)
          timer.unref()
        }),
      ])
      t.failures = 0
      this.#set(t, { status: 'up' })
    } catch (error) {
      t.failures++
      const detail = error instanceof Error ? error.message : String(error)
      if (t.failures >= (this.#p.failuresBeforeDown ?? 2)) this.#set(t, { status: 'down', detail })
      else if (t.state.status !== 'up') this.#set(t, { status: 'unknown', detail })
    } finally {
      clearTimeout(timer)
      t.running = false
    }
  }

  #set(t: Tracked, state: CapabilityState): void {
    const previous = t.state.status
    t.state = state
    if (previous !== state.status) this.#p.onChange?.(t.capability.name, state, previous)
  }
}
