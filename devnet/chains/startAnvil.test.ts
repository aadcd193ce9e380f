import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { alive } from '../testing/processTree.js'
import { startAnvil } from './startAnvil.js'

describe('startAnvil', () => {
  it('a port already taken is an error at once, naming the port and what Anvil said, and leaves no process', async () => {
    const holder = createServer()
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r))
    const port = (holder.address() as AddressInfo).port
    try {
      const t0 = Date.now()
      const error = await startAnvil({ port, chainId: 8453 }).then(
        () => undefined,
        (e: Error) => e,
      )
      expect(error?.message).toMatch(new RegExp(`^anvil exited \\(\\d+\\) before listening on port ${port}: .*in use`, 'is'))
      expect(Date.now() - t0).toBeLessThan(5_000)
    } finally {
      holder.close()
    }
  })

  it('close stops Anvil and its watchdog', async () => {
    const anvil = await startAnvil({ chainId: 8453 })
    expect(alive(anvil.pid)).toBe(true)
    await anvil.close()
    expect(alive(anvil.pid)).toBe(false)
  })
})
