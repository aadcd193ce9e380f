import { describe, expect, it } from 'vitest'
import { NdjsonChannel } from './NdjsonChannel.js'

describe('NdjsonChannel', () => {
  it('yields one JSON object per line and ends a failed stream with an {error} line', async () => {
    const channel = new NdjsonChannel()
    const read = (async () => {
      let text = ''
      for await (const part of channel) text += part
      return text
    })()
    channel.push({ a: 1 })
    await new Promise((r) => setTimeout(r, 5))
    channel.push({ b: 'x\ny' })
    channel.fail('boom')
    channel.push({ ignored: true })
    const lines = (await read).trimEnd().split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([{ a: 1 }, { b: 'x\ny' }, { error: 'boom' }])
  })

  it('batches lines pushed within the flush interval into one write, without delaying the first', async () => {
    const channel = new NdjsonChannel(30)
    const writes: string[] = []
    const read = (async () => {
      for await (const part of channel) writes.push(part)
    })()
    channel.push({ n: 0 })
    await new Promise((r) => setTimeout(r, 5))
    expect(writes).toEqual(['{"n":0}\n'])
    for (let n = 1; n <= 5; n++) channel.push({ n })
    await new Promise((r) => setTimeout(r, 60))
    channel.push({ n: 6 })
    channel.end()
    await read
    expect(writes.join('')).toBe([0, 1, 2, 3, 4, 5, 6].map((n) => `{"n":${n}}\n`).join(''))
    expect(writes.length).toBeLessThanOrEqual(3)
  })
})
