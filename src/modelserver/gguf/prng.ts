/**
 * A small seeded PRNG (xoshiro128**, 32-bit integer arithmetic only), so weights are identical on every
 * platform and every build. No Math.random, no transcendental functions.
 */
export class Prng {
  private s: Uint32Array

  constructor(seed: number) {
    // splitmix32 to spread the seed over the 128-bit state
    this.s = new Uint32Array(4)
    let x = seed >>> 0
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0
      let z = x
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
      this.s[i] = (z ^ (z >>> 16)) >>> 0
    }
  }

  nextU32(): number {
    const s = this.s
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0
    const t = (s[1]! << 9) >>> 0
    s[2] ^= s[0]!
    s[3] ^= s[1]!
    s[1] ^= s[2]!
    s[0] ^= s[3]!
    s[2] ^= t
    s[3] = rotl(s[3]!, 11)
    return result
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296
  }

  /** Approximately normal (Irwin–Hall of 4 uniforms), mean 0, standard deviation `std`. */
  normal(std: number): number {
    const sum = this.next() + this.next() + this.next() + this.next() - 2
    return sum * std * 1.7320508075688772 // the sum's variance is 4/12, so scale by sqrt(3)
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
