import { Mutex } from 'async-mutex'

/**
 * One async mutex per key (a normalised model name), so writes to the same name run one after the other while
 * writes to different names run side by side. Keys live in a `Map` (a name such as `__proto__` or `constructor`
 * is just a key) and are dropped once nobody holds or waits for them.
 */
export class KeyedMutex {
  private readonly locks = new Map<string, { mutex: Mutex; users: number }>()

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(key)
    if (!lock) {
      lock = { mutex: new Mutex(), users: 0 }
      this.locks.set(key, lock)
    }
    lock.users++
    try {
      return await lock.mutex.runExclusive(fn)
    } finally {
      if (--lock.users === 0) this.locks.delete(key)
    }
  }

  /** Keys currently held or waited for (tests check that none are left behind). */
  get size(): number {
    return this.locks.size
  }
}
