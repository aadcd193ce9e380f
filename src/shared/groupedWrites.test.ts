import { describe, expect, it } from 'vitest'
import { groupedWrites } from './groupedWrites.js'

/** A write that records its rounds and finishes only when the test lets it. */
function recordedWrite() {
  const rounds: number[][] = []
  const finish: ((error?: Error) => void)[] = []
  const write = (items: readonly number[]) =>
    new Promise<void>((resolve, reject) => {
      rounds.push([...items])
      finish.push((error) => (error ? reject(error) : resolve()))
    })
  return { rounds, finish, write }
}

const settle = () => new Promise((r) => setImmediate(r))

describe('groupedWrites', () => {
  it('writes a lone item at once, in a round of its own', async () => {
    const { rounds, finish, write } = recordedWrite()
    const add = groupedWrites(write)
    const done = add(1)
    await settle()
    expect(rounds).toEqual([[1]])
    finish[0]!()
    await expect(done).resolves.toBeUndefined()
  })

  it('puts every item added while a round runs into the next round, in order, and resolves each with its own round', async () => {
    const { rounds, finish, write } = recordedWrite()
    const add = groupedWrites(write)
    const first = add(1)
    await settle()
    const later = [add(2), add(3), add(4)]
    let laterDone = false
    void Promise.all(later).then(() => (laterDone = true))
    await settle()
    expect(rounds).toEqual([[1]]) // the second round waits for the first
    finish[0]!()
    await first
    await settle()
    expect(rounds).toEqual([[1], [2, 3, 4]])
    expect(laterDone).toBe(false) // not before its own round is written
    finish[1]!()
    await Promise.all(later)
  })

  it('a failed round rejects its own items only; the next round is still written', async () => {
    const { rounds, finish, write } = recordedWrite()
    const add = groupedWrites(write)
    const first = add(1)
    await settle()
    const second = add(2)
    finish[0]!(new Error('disk full'))
    await expect(first).rejects.toThrow('disk full')
    await settle()
    expect(rounds).toEqual([[1], [2]])
    finish[1]!()
    await expect(second).resolves.toBeUndefined()
  })

  it('puts at most `max` items in a round', async () => {
    const { rounds, finish, write } = recordedWrite()
    const add = groupedWrites(write, { max: 2 })
    const all = [1, 2, 3, 4, 5].map((i) => add(i))
    for (let round = 0; round < 3; round++) {
      await settle()
      finish[round]!()
    }
    await Promise.all(all)
    expect(rounds).toEqual([[1, 2], [3, 4], [5]])
  })
})
