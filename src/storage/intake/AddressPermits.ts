import { ipKeyGenerator } from 'express-rate-limit'

/** The key a client address is counted under: an IPv6 address by its /56 (one host holds a whole prefix), as the rate limit does. */
export function clientAddressKey(ip: string | undefined): string {
  const address = ip ?? ''
  return address.includes(':') ? ipKeyGenerator(address) : address
}

/**
 * At most `max` permits per client address at once (a Map: addresses are user-supplied keys). A permit is
 * given back exactly once; an address with none left is dropped from the map, so the map holds only
 * addresses with something in flight.
 */
export class AddressPermits {
  readonly #inUse = new Map<string, number>()

  constructor(
    readonly max: number,
    /** Builds the refusal (the caller's error: 429 with its code and `Retry-After`). */
    readonly refuse: () => Error,
  ) {}

  inUse(key: string): number {
    return this.#inUse.get(key) ?? 0
  }

  /** Takes a permit for `key` or throws `refuse()`; call the returned function once to give it back. */
  acquire(key: string): () => void {
    const used = this.#inUse.get(key) ?? 0
    if (used >= this.max) throw this.refuse()
    this.#inUse.set(key, used + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.#inUse.get(key) ?? 1) - 1
      if (left <= 0) this.#inUse.delete(key)
      else this.#inUse.set(key, left)
    }
  }
}
