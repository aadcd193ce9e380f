import { createServer, type AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { alreadyRunning, portsTaken, takenPorts } from './preflight.js'
import { isRunningStart, portHolder } from './processes.js'

const fits = (lines: string[]) => {
  for (const line of lines) expect(`[start] ${line}`.length, line).toBeLessThanOrEqual(80)
}

describe('npm start before it starts anything', () => {
  it('finds a port another process listens on, and names that process', async () => {
    const holder = createServer()
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r))
    const port = (holder.address() as AddressInfo).port
    try {
      const free = createServer()
      await new Promise<void>((r) => free.listen(0, '127.0.0.1', r))
      const freePort = (free.address() as AddressInfo).port
      await new Promise((r) => free.close(r))
      const taken = await takenPorts([
        { port, service: 'devnet chain eip155:8453 (local Base, Anvil)', host: '127.0.0.1', setting: 'DEVNET_PORT_OFFSET' },
        { port: freePort, service: 'the gateway', host: '0.0.0.0', setting: 'SERVICE_PORT' },
      ])
      expect(taken).toHaveLength(1)
      expect(taken[0]).toMatchObject({ port, reason: 'EADDRINUSE', holder: { pid: process.pid } })
      expect(portHolder(port)?.pid).toBe(process.pid)
      const lines = portsTaken(taken)
      fits(lines)
      expect(lines.join('\n')).toMatch(new RegExp(`^cannot start: a port it needs is not free\\n  ${port} +devnet chain eip155:8453 \\(local Base, Anvil\\)\\n +in use \\(EADDRINUSE\\) by pid ${process.pid}: `))
      expect(lines.join(' ')).toContain('DEVNET_PORT_OFFSET=<n>')
    } finally {
      holder.close()
    }
  })

  it('a port held on every address is taken for a service on 127.0.0.1 too', async () => {
    const holder = createServer()
    await new Promise<void>((r) => holder.listen(0, '0.0.0.0', r))
    const port = (holder.address() as AddressInfo).port
    try {
      const taken = await takenPorts([{ port, service: 'the model server', host: '127.0.0.1', setting: 'MODELSERVER_PORT' }])
      expect(taken.map((t) => t.port)).toEqual([port])
    } finally {
      holder.close()
    }
  })

  it('an npm start already running on the data directory: its pid, since when, each port and what to do, within 80 columns', () => {
    const lines = alreadyRunning({
      pid: 4242,
      startedAt: Date.parse('2026-01-01T10:00:00'),
      dataDir: '/home/someone/pay2store/data',
      ports: [
        { port: 8000, service: 'the gateway', url: 'http://127.0.0.1:8000' },
        { port: 11434, service: 'the model server', url: 'http://127.0.0.1:11434' },
        { port: 8545, service: 'devnet chain eip155:8453 (local Base, Anvil)' },
      ],
    })
    fits(lines)
    const text = lines.join('\n')
    expect(text.replace(/\s+/g, ' ')).toMatch(/^npm start is already running on this data directory \(\/home\/someone\/pay2store\/data\): pid 4242, up since 10:00:00\. It serves: /)
    expect(text).toContain('\n  8000   the gateway http://127.0.0.1:8000\n  11434  the model server http://127.0.0.1:11434\n  8545   devnet chain eip155:8453 (local Base, Anvil)\n')
    expect(text.replace(/\n/g, ' ')).toContain('kill 4242')
  })

  it('a pid that is not an npm start (this test, a pid that is gone) is not one', () => {
    expect(isRunningStart(process.pid)).toBe(false)
    expect(isRunningStart(2 ** 22 + 12345)).toBe(false)
  })
})
