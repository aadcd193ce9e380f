/**
 * Deterministic randomness for a run: every wallet, company name, nonce and file a row makes comes from the
 * run's seed (SHA-256 in counter mode), so `--seed n` reproduces the requests of a failed run.
 */
import { createHash } from 'node:crypto'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

export class SeededRandom {
  #counter = 0

  constructor(readonly seed: number, readonly label = '') {}

  /** `n` bytes, the next ones of this stream. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n)
    for (let offset = 0; offset < n; offset += 32) {
      const block = createHash('sha256').update(`${this.seed}|${this.label}|${this.#counter++}`).digest()
      out.set(block.subarray(0, Math.min(32, n - offset)), offset)
    }
    return out
  }

  hex(n: number): string {
    return Buffer.from(this.bytes(n)).toString('hex')
  }

  /** A fresh upper-case name (`CONF3FA2B1C0`). */
  name(prefix: string): string {
    return `${prefix}${this.hex(4).toUpperCase()}`
  }

  /** A wallet with a private key from the stream. */
  account(): PrivateKeyAccount {
    for (;;) {
      const key = BigInt(`0x${this.hex(32)}`)
      if (key > 0n && key < N) return privateKeyToAccount(`0x${key.toString(16).padStart(64, '0')}`)
    }
  }

  /** A stream of its own (same seed), so one machine's draws do not shift another's. */
  fork(label: string): SeededRandom {
    return new SeededRandom(this.seed, `${this.label}/${label}`)
  }
}
