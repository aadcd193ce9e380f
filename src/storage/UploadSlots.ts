import { TooManyUploadsError } from './errors.js'

/**
 * At most `max` uploads received by this instance at once (issue 19, "bounded everything"): beyond it the
 * request is refused at once — 503 `too_many_uploads` with `Retry-After` — before its body is read or its
 * payment looked at, so a refused client loses nothing and may retry here or on another instance.
 */
export class UploadSlots {
  #inUse = 0

  constructor(
    readonly max: number,
    readonly retryAfterS: number,
  ) {}

  get inUse(): number {
    return this.#inUse
  }

  /** Takes a slot or throws `TooManyUploadsError`; call the returned function exactly once to give it back. */
  acquire(): () => void {
    if (this.#inUse >= this.max) throw new TooManyUploadsError(this.max, this.retryAfterS)
    this.#inUse++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#inUse--
    }
  }
}
