import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { pumpStream } from './pumpStream.js'

let server: http.Server | undefined
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

async function serve(source: () => AsyncIterable<string | Uint8Array>): Promise<{ url: string; pumped: Promise<void>[] }> {
  const pumped: Promise<void>[] = []
  server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/x-ndjson')
    const pumping = pumpStream(source(), res)
    pumping.catch(() => res.destroy())
    pumped.push(pumping)
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, pumped }
}

describe('pumpStream', () => {
  it('sends every chunk as it is produced, in order, and ends the response', async () => {
    const { url } = await serve(async function* () {
      yield 'a\n'
      yield Buffer.from('b\n')
      yield 'c'.repeat(200_000) // larger than a socket buffer: the pump waits for 'drain'
      yield '\n'
    })
    const text = await (await fetch(url)).text()
    expect(text).toBe(`a\nb\n${'c'.repeat(200_000)}\n`)
  })

  it('a client that goes away returns the source (its finally runs, nothing is thrown into it)', async () => {
    let thrownIn: unknown
    let released!: () => void
    const finallyRan = new Promise<void>((resolve) => (released = resolve))
    const { url, pumped } = await serve(async function* () {
      try {
        for (let i = 0; ; i++) {
          yield `${i}\n`
          await new Promise((r) => setTimeout(r, 5))
        }
      } catch (error) {
        thrownIn = error
      } finally {
        released()
      }
    })
    await new Promise<void>((resolve) => {
      const req = http.get(url, (res) => res.once('data', () => (req.destroy(), resolve())))
      req.on('error', () => {})
    })
    await finallyRan
    await pumped[0]
    expect(thrownIn).toBeUndefined()
  })

  it('rejects when the source fails (the caller destroys the response)', async () => {
    const { url, pumped } = await serve(async function* () {
      yield 'a\n'
      throw new Error('upstream broke')
    })
    await fetch(url)
      .then((res) => res.text())
      .catch(() => {})
    await expect(pumped[0]).rejects.toThrow('upstream broke')
  })

  it('puts each chunk on the wire before the source is asked for the next one', async () => {
    // node:http corks the socket on every write and uncorks it in a nextTick, which waits for every microtask
    // queued before it: the source's next step (in the gateway, the metering reading the chunk just passed on
    // and the generators down to the model server) would hold the first token back.
    let seen: { corked: number; unsent: number } | undefined
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/event-stream')
      res.flushHeaders()
      void pumpStream(
        (async function* () {
          yield 'data: first\n\n'
          seen = { corked: res.socket!.writableCorked, unsent: res.socket!.writableLength }
          yield 'data: second\n\n'
        })(),
        res,
      )
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const text = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)).text()
    expect(text).toBe('data: first\n\ndata: second\n\n')
    expect(seen).toEqual({ corked: 0, unsent: 0 })
  })
})
