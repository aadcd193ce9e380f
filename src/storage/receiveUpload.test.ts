import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../../tests/support/waitFor.js'
import { measureUpload, receiveUpload } from './receiveUpload.js'

let dir: string
let server: Server
let url: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recv-'))
  server = createServer(async (req, res) => {
    try {
      if (req.url === '/measure') {
        const got = await measureUpload(req, { maxBytes: 100_000n, limits: { maxParts: 3, maxFieldBytes: 16 } })
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ...got, sizeBytes: got.sizeBytes.toString() }))
        return
      }
      const got = await receiveUpload(req, { tmpDir: join(dir, 'tmp'), maxBytes: 100_000n })
      const bytes = await readFile(got.path)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ...got, sizeBytes: got.sizeBytes.toString(), reread: createHash('sha256').update(bytes).digest('hex') }))
    } catch (e) {
      req.resume() // the caller drains or bounds the rest (StoreIntake: boundUnreadBody)
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ code: (e as { code?: string }).code, message: (e as Error).message }))
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await rm(dir, { recursive: true, force: true })
})

const form = (data: Uint8Array, field = 'file', type = 'image/png') => {
  const f = new FormData()
  f.append('note', 'ignored')
  f.append(field, new Blob([data as Uint8Array<ArrayBuffer>], { type }), 'x.png')
  return f
}
const post = (body: BodyInit, headers: Record<string, string> = {}, path = '') =>
  fetch(`${url}${path}`, { method: 'POST', body, headers }).then(async (r) => ({ status: r.status, body: await r.json() }))

describe('receiveUpload', () => {
  it('streams the file to disk with its SHA-256, size and type', async () => {
    const data = randomBytes(99_999)
    const r = await post(form(data))
    expect(r.status).toBe(200)
    const sha = createHash('sha256').update(data).digest('hex')
    expect(r.body).toMatchObject({ sha256: sha, reread: sha, sizeBytes: '99999', mimeType: 'image/png', filename: 'x.png' })
  })
  it('accepts exactly the maximum and refuses one byte more with payload_too_large', async () => {
    expect((await post(form(randomBytes(100_000)))).status).toBe(200)
    const r = await post(form(randomBytes(100_001)))
    expect(r.body.code).toBe('payload_too_large')
  })
  it('refuses an empty file with empty body', async () => {
    expect((await post(form(new Uint8Array()))).body).toEqual({ code: 'empty_body', message: 'empty body' })
  })
  it('refuses a missing file field and a non-multipart body', async () => {
    expect((await post(form(randomBytes(10), 'other'))).body.code).toBe('invalid_multipart')
    expect((await post('hello', { 'content-type': 'text/plain' })).body.code).toBe('invalid_multipart')
    expect((await post('--x\r\nbroken', { 'content-type': 'multipart/form-data; boundary=x' })).body.code).toBe('invalid_multipart')
  })
  it('refuses a second file part (one file per request: the quote and receipt are for one), keeping nothing', async () => {
    const tmp = join(dir, 'tmp')
    const files = () => (existsSync(tmp) ? readdirSync(tmp).sort() : [])
    const before = files()
    for (let i = 0; i < 5; i++) {
      // the first file is being written when the second part comes: its file must be closed, then removed
      const f = form(randomBytes(60_000))
      f.append('file', new Blob([randomBytes(2000)], { type: 'image/png' }), 'y.png')
      expect((await post(f)).body).toEqual({ code: 'invalid_multipart', message: 'more than one file part: store one file per request' })
    }
    await waitFor('the refused uploads\' temp files removed', async () => (files().length === before.length ? true : undefined), 5_000, async () => files())
    const f = form(randomBytes(1000))
    f.append('file', new Blob([randomBytes(2000)], { type: 'image/png' }), 'y.png')
    expect((await post(f, {}, '/measure')).body.code).toBe('invalid_multipart')
  })
  it('leaves no temp file behind after a refusal', async () => {
    await post(form(randomBytes(200_000)))
    const tmp = join(dir, 'tmp')
    const left = () => (existsSync(tmp) ? readdirSync(tmp) : [])
    // only the successful uploads above remain (the handler owns them); the refused one's file is removed after
    // the answer, which a loaded machine (three test forks on two cores) took more than 100 ms to get to
    await waitFor('the refused upload\'s temp file removed', async () => (left().length === 2 ? true : undefined), 5_000, async () => left())
  })

  it('measureUpload: the same size, SHA-256 and type, and nothing written to disk', async () => {
    const data = randomBytes(50_000)
    const r = await post(form(data), {}, '/measure')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ sha256: createHash('sha256').update(data).digest('hex'), sizeBytes: '50000', mimeType: 'image/png', filename: 'x.png' })
    // The measured bytes are in no file of the upload folder (counting its files raced the removals of the
    // refusals above on a loaded machine).
    const tmp = join(dir, 'tmp')
    const contents = (name: string) => {
      try {
        return readFileSync(join(tmp, name))
      } catch {
        return Buffer.alloc(0) // removed meanwhile
      }
    }
    for (const name of existsSync(tmp) ? readdirSync(tmp) : []) expect(contents(name).equals(data), name).toBe(false)
  })
  it('bounds the other parts: a field above maxFieldBytes, more than maxParts parts', async () => {
    const long = new FormData()
    long.append('note', 'n'.repeat(17))
    long.append('file', new Blob([Buffer.from('hi')]), 'a.bin')
    expect((await post(long, {}, '/measure')).body.code).toBe('multipart_field_too_large')
    const many = new FormData()
    for (let i = 0; i < 3; i++) many.append(`f${i}`, 'v')
    many.append('file', new Blob([Buffer.from('hi')]), 'a.bin')
    expect((await post(many, {}, '/measure')).body.code).toBe('multipart_too_many_parts')
    const fine = new FormData()
    fine.append('note', 'n'.repeat(16))
    fine.append('file', new Blob([Buffer.from('hi')]), 'a.bin')
    expect((await post(fine, {}, '/measure')).status).toBe(200)
  })
})
