import { describe, expect, it } from 'vitest'
import { retryOnAddressInUse } from './retryOnAddressInUse.js'

describe('retryOnAddressInUse (the suites start npm start and the mocks on free ports)', () => {
  it('tries again with whatever the next attempt picks when a port was taken, and returns its result', async () => {
    const ports: number[] = []
    const result = await retryOnAddressInUse(async () => {
      ports.push(41905 + ports.length)
      if (ports.length < 3) throw new Error(`prism exited before listening:\nlisten EADDRINUSE: address already in use 127.0.0.1:${ports.at(-1)}`)
      return `up on ${ports.at(-1)}`
    })
    expect(result).toBe('up on 41907')
    expect(ports).toHaveLength(3)
  })

  it('gives up after its tries, and at once on any other failure', async () => {
    let tries = 0
    await expect(retryOnAddressInUse(async () => { tries++; throw new Error('listen EADDRINUSE: address already in use') }, 2)).rejects.toThrow(/EADDRINUSE/)
    expect(tries).toBe(2)
    tries = 0
    await expect(retryOnAddressInUse(async () => { tries++; throw new Error('npm start did not come up in 180000 ms') })).rejects.toThrow(/did not come up/)
    expect(tries).toBe(1)
  })
})
