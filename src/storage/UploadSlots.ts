import { TooManyUploadsError } from './errors.js'

/**
 * Which slots an upload may take: `verified` — its payment was believed (signed by its payer, funded, unused)
 * before anything was read — or `unverified`: the chain or node could not be asked, so the payer may be
 * anyone; such uploads share a small pool of their own and can never hold the slots of verified payers.
 */
export type SlotPool = 'verified' | 'unverified'

/**
 * At most `max` uploads with a believed payment received by this instance at once, and at most `unverifiedMax`
 * more whose payer could not be verified: beyond either the request is refused
 * at once — 503 `too_many_uploads` with `Retry-After` — before its body is read, so a refused client loses
 * nothing and may retry here or on another instance.
 */
export class UploadSlots {
  readonly #inUse = new Map<SlotPool, number>([
    ['verified', 0],
    ['unverified', 0],
  ])

  constructor(
    readonly max: number,
    readonly retryAfterS: number,
    readonly unverifiedMax = 0,
  ) {}

  /** Slots taken by uploads whose payment was believed. */
  get inUse(): number {
    return this.#inUse.get('verified') ?? 0
  }

  /** Slots of the small pool taken by uploads whose payer could not be verified. */
  get unverifiedInUse(): number {
    return this.#inUse.get('unverified') ?? 0
  }

  /** Takes a slot of `pool` or throws `TooManyUploadsError`; call the returned function exactly once to give it back. */
  acquire(pool: SlotPool = 'verified'): () => void {
    const limit = pool === 'verified' ? this.max : this.unverifiedMax
    const used = this.#inUse.get(pool) ?? 0
    if (used >= limit) throw new TooManyUploadsError(limit, this.retryAfterS, pool)
    this.#inUse.set(pool, used + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.#inUse.set(pool, (this.#inUse.get(pool) ?? 1) - 1)
    }
  }
}
