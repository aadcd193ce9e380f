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
})
