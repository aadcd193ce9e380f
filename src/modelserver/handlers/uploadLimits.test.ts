import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { once } from 'node:events'
import { readdirSync, readlinkSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { waitFor } from '../../../tests/support/waitFor.js'
import { createEngine } from '../engine/createEngine.js'
import type { Engine } from '../engine/Engine.js'

// Blob and registry uploads are bounded: unbounded, one client could fill the disk, or open upload sessions (each a
// temporary file kept an hour) without end.

const MAX = 256 * 1024
let engine: Engine
let ms: TestModelServer
let modelsDir: string

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  modelsDir = await mkdtemp(join(tmpdir(), 'upload-limits-'))
  ms = await startTestModelServer({ engine, config: { modelsDir, installDefaults: false, maxBlobBytes: MAX, maxUploadSessions: 2 } })
})

afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
  await rm(modelsDir, { recursive: true, force: true })
})

const readlinkSafe = (link: string): string | undefined => {
  try {
    return readlinkSync(link)
  } catch {
    return undefined // closed since it was listed
  }
}

const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

/** A body of `total` bytes sent in 16 KiB pieces without a Content-Length (chunked), as a client that hides its size. */
function chunked(total: number): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close()
      const piece = randomBytes(Math.min(16 * 1024, total - sent))
      sent += piece.length
      controller.enqueue(piece)
    },
  })
}

/** What is in the models directory's blobs besides whole blobs (`sha256-…`): temporary files left behind. */
const tempFiles = async () => (await readdir(join(modelsDir, 'blobs')).catch(() => [] as string[])).filter((f) => !f.startsWith('sha256-'))

describe('POST /api/blobs/{digest} is bounded by MODELSERVER_MAX_BLOB_BYTES', () => {
  it('a blob within the bound is stored', async () => {
    const bytes = randomBytes(MAX)
    const answer = await fetch(`${ms.url}/api/blobs/${digestOf(bytes)}`, { method: 'POST', body: bytes })
    expect(answer.status).toBe(201)
  })

  it('a Content-Length past the bound is 413 before a byte is written', async () => {
    const bytes = randomBytes(MAX + 1)
    const answer = await fetch(`${ms.url}/api/blobs/${digestOf(bytes)}`, { method: 'POST', body: bytes })
    expect(answer.status).toBe(413)
    expect(await answer.json()).toEqual({ error: `blob larger than ${MAX} bytes` })
  })

  it('a chunked body that grows past the bound is cut at the bound: 413 and no file left', async () => {
    const answer = await fetch(`${ms.url}/api/blobs/sha256:${'0'.repeat(64)}`, { method: 'POST', body: chunked(4 * MAX), duplex: 'half' } as RequestInit)
    expect(answer.status).toBe(413)
    expect(await tempFiles()).toEqual([])
  })

  it('uploads cut off mid-body by their clients leave no temporary file and no open file behind', async () => {
    const partials = async () => (await readdir(join(modelsDir, 'tmp')).catch(() => [] as string[])).filter((f) => f.startsWith('partial-'))
    const before = await partials()
    const { port } = new URL(ms.url)
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const digest = digestOf(randomBytes(32))
        const socket = connect(Number(port), '127.0.0.1')
        await once(socket, 'connect')
        socket.write(`POST /api/blobs/${digest} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${MAX}\r\n\r\n`)
        socket.write(randomBytes(64 * 1024))
        await new Promise((r) => setTimeout(r, 100))
        socket.destroy()
      }),
    )
    await waitFor('the cut uploads\' temporary files removed', async () => ((await partials()).length === before.length ? true : undefined), 5_000, async () => await partials())
    // nor held open (a removed file still fills the disk while a descriptor holds it); the server is this process
    const openPartials = () => readdirSync('/proc/self/fd').filter((fd) => (readlinkSafe(`/proc/self/fd/${fd}`) ?? '').includes(`${join(modelsDir, 'tmp')}/partial-`))
    await waitFor('no descriptor on a partial file', async () => (openPartials().length === 0 ? true : undefined), 5_000, async () => openPartials())
  })
})

describe('registry uploads: the blob is bounded across PATCHes, and so is the number of sessions', () => {
  const uploads = `/v2/library/big/blobs/uploads/`
  const start = async () => {
    const answer = await fetch(`${ms.url}${uploads}`, { method: 'POST' })
    return { status: answer.status, location: answer.headers.get('location'), body: answer.status === 202 ? undefined : ((await answer.json()) as unknown) }
  }

  it('PATCHes that add up past the bound are 413 SIZE_INVALID and end the session', async () => {
    const { status, location } = await start()
    expect(status).toBe(202)
    const first = await fetch(`${ms.url}${location}`, { method: 'PATCH', body: randomBytes(MAX - 10) })
    expect(first.status).toBe(202)
    const second = await fetch(`${ms.url}${location}`, { method: 'PATCH', body: chunked(64 * 1024), duplex: 'half' } as RequestInit)
    expect(second.status).toBe(413)
    expect(await second.json()).toMatchObject({ errors: [{ code: 'SIZE_INVALID' }] })
    // The session is gone with its file.
    const after = await fetch(`${ms.url}${location}`, { method: 'PATCH', body: randomBytes(1) })
    expect(after.status).toBe(404)
    expect(await tempFiles()).toEqual([])
  })

  it('past MODELSERVER_MAX_UPLOAD_SESSIONS open sessions a new one is 429 TOOMANYREQUESTS; a finished one frees its place', async () => {
    const one = await start()
    expect(one.status).toBe(202)
    expect((await start()).status).toBe(202)
    const third = await start()
    expect(third.status).toBe(429)
    expect(third.body).toMatchObject({ errors: [{ code: 'TOOMANYREQUESTS' }] })
    const done = await fetch(`${ms.url}${one.location}?digest=${digestOf(Buffer.alloc(0))}`, { method: 'PUT' })
    expect(done.status).toBe(201)
    expect((await start()).status).toBe(202)
  })
})

describe('pull: a registry cannot send more than its manifest declares', () => {
  let registry: Server
  beforeAll(async () => {
    const config = Buffer.from('{}')
    const layer = randomBytes(1024)
    const manifest = {
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: digestOf(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: digestOf(layer), size: layer.length }],
    }
    // A registry whose layer never ends: it sends far more than the 1024 bytes it declared.
    // the same layer declared without a size, above the server's bound, and a manifest without end
    const manifestOf = (tag: string) => {
      if (tag === 'nosize') return { ...manifest, layers: [{ ...manifest.layers[0]!, size: undefined }] }
      if (tag === 'huge') return { ...manifest, layers: [{ ...manifest.layers[0]!, size: MAX + 1 }] }
      return manifest
    }
    registry = createServer((req, res) => {
      if (req.url?.endsWith('/manifests/endless')) {
        res.writeHead(200, { 'content-type': manifest.mediaType })
        const flood = () => {
          while (res.write(' '.repeat(64 * 1024)));
        }
        res.on('drain', flood)
        res.on('close', () => res.off('drain', flood))
        return flood()
      }
      if (req.url?.includes('/manifests/')) return void res.writeHead(200, { 'content-type': manifest.mediaType }).end(JSON.stringify(manifestOf(req.url.split('/').at(-1)!)))
      if (req.url?.includes(digestOf(config))) return void res.end(config)
      res.writeHead(200)
      const flood = () => {
        while (res.write(randomBytes(64 * 1024)));
      }
      res.on('drain', flood)
      res.on('close', () => res.off('drain', flood))
      flood()
    }).listen(0, '127.0.0.1')
    await new Promise((resolve) => registry.once('listening', resolve))
  })
  afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())))

  it('the pull fails (registry_error) at the declared size and keeps nothing', async () => {
    const port = (registry.address() as AddressInfo).port
    const puller = await startTestModelServer({ engine, config: { installDefaults: false, registries: [`127.0.0.1:${port}`] } })
    try {
      const answer = await fetch(`${puller.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: `127.0.0.1:${port}/library/flood:latest`, insecure: true, stream: false }) })
      expect(answer.status).toBe(502)
      expect(((await answer.json()) as { error: string }).error).toMatch(/more than the 1024 bytes its manifest declares/)
    } finally {
      await puller.close()
    }
  })

  it('a layer without a size, or declaring more than MODELSERVER_MAX_BLOB_BYTES, and a manifest without end fail before any layer is written', async () => {
    const port = (registry.address() as AddressInfo).port
    const puller = await startTestModelServer({ engine, config: { installDefaults: false, registries: [`127.0.0.1:${port}`], maxBlobBytes: MAX } })
    try {
      const pull = async (tag: string) => {
        const answer = await fetch(`${puller.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: `127.0.0.1:${port}/library/flood:${tag}`, insecure: true, stream: false }) })
        return { status: answer.status, error: ((await answer.json()) as { error: string }).error }
      }
      expect(await pull('nosize')).toMatchObject({ status: 502, error: expect.stringMatching(/without a sha256 digest, a media type and a whole size/) })
      expect(await pull('huge')).toMatchObject({ status: 502, error: expect.stringMatching(new RegExp(`declares ${MAX + 1} bytes, above MODELSERVER_MAX_BLOB_BYTES`)) })
      expect(await pull('endless')).toMatchObject({ status: 502, error: expect.stringMatching(/larger than 4194304 bytes/) })
      expect(puller.mismatches).toEqual([])
    } finally {
      await puller.close()
    }
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect(ms.mismatches).toEqual([])
  })
})
