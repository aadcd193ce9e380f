import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RequestLostError } from './CliError.js'
import { sendFile } from './sendFile.js'

const dir = mkdtempSync(join(tmpdir(), 'send-file-'))
const file = join(dir, 'big.bin')
const size = 16 * 1024 * 1024
writeFileSync(file, randomBytes(size))

/** A server that answers 413 as soon as the first bytes of the body arrive, and keeps reading. */
const early = createServer((req, res) => {
  req.once('data', () => {
    res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"payload_too_large","message":"too large"}')
  })
  req.resume()
})
await new Promise<void>((r) => early.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${(early.address() as AddressInfo).port}/`
afterAll(() => early.close())

describe('sendFile', () => {
  it('a server that cannot be reached: no progress at all, the error names the service', async () => {
    const reports: number[] = []
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    await expect(sendFile({ url: `http://127.0.0.1:${port}/store`, path: file, size, service: 'gateway', onProgress: (sent) => reports.push(sent) })).rejects.toThrow(/connection refused\) — is the gateway running/)
    await new Promise((r) => setTimeout(r, 200))
    expect(reports).toEqual([])
  })

  it('a connection lost after the request started is RequestLostError (the server may have acted on it); one never made is not', async () => {
    const cut = createServer((req) => {
      req.once('data', () => req.socket.destroy())
    })
    await new Promise<void>((r) => cut.listen(0, '127.0.0.1', r))
    try {
      const lost = await sendFile({ url: `http://127.0.0.1:${(cut.address() as AddressInfo).port}/store`, path: file, size, service: 'gateway' }).catch((e: unknown) => e)
      expect(lost).toBeInstanceOf(RequestLostError)
      expect(lost).toMatchObject({ exitCode: 3 })
      expect((lost as RequestLostError).reason).toMatch(/connection reset|socket hang up|EPIPE/)
    } finally {
      await new Promise((r) => cut.close(r))
    }
    const refused = await sendFile({ url: 'http://127.0.0.1:1/store', path: file, size, service: 'gateway' }).catch((e: unknown) => e)
    expect(refused).not.toBeInstanceOf(RequestLostError)
    expect(refused).toMatchObject({ code: 'server_unreachable', exitCode: 3 })
  })

  it('an answer before the body is sent ends the upload: no progress after it, the rest of the file is not read', async () => {
    let answered = false
    const late: number[] = []
    let last = 0
    const result = await sendFile({
      url,
      path: file,
      size,
      chunkBytes: 64 * 1024,
      onProgress: (sent) => {
        last = sent
        if (answered) late.push(sent)
      },
    })
    answered = true
    expect(result.status).toBe(413)
    expect(JSON.parse(result.body)).toMatchObject({ error: 'payload_too_large' })
    await new Promise((r) => setTimeout(r, 300))
    expect(late).toEqual([])
    expect(last).toBeLessThan(size)
  })

  it('a file that cannot be read is the caller\'s mistake, not an unreachable server', async () => {
    await expect(sendFile({ url, path: join(dir, 'missing.bin'), size: 10 })).rejects.toMatchObject({ code: 'bad_file', exitCode: 2 })
  })
})
