import { createHash } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import { Ollama } from 'ollama'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zProgressChunk } from '../../../generated/modelserver/zod.gen.js'
import { createEngine } from '../engine/createEngine.js'
import type { Engine } from '../engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'

/** Two local instances: `a` serves the registry side, `b` pulls from and pushes to it (seed §3.2). */
let engine: Engine
let a: TestModelServer
let b: TestModelServer
let fromDefault: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  a = await startTestModelServer({ engine })
  // `b` may use `a` as a registry: it is allow-listed (MODELSERVER_REGISTRIES), as any registry besides Ollama's must be.
  b = await startTestModelServer({ engine, config: { installDefaults: false, registries: [`127.0.0.1:${a.port}`] } })
  fromDefault = await startTestModelServer({ engine, config: { installDefaults: false, registryUrl: a.url } })
})

afterAll(async () => {
  await fromDefault?.close()
  await b?.close()
  await a?.close()
  await engine?.dispose()
})

/** Collapses repeated `downloading <digest>` lines into one step, keeping the order of statuses. */
function steps(statuses: string[]): string[] {
  return statuses.map((s) => (s.startsWith('downloading sha256:') ? 'downloading' : s)).filter((s, i, all) => s !== all[i - 1])
}

describe('pull and push between two instances (OCI distribution)', () => {
  it('pulls with the statuses of 3.2 in order, then the pulled model generates', async () => {
    const client = new Ollama({ host: b.url })
    const name = `127.0.0.1:${a.port}/library/svc-tiny-chat:latest`
    const progress = await client.pull({ model: name, insecure: true, stream: true })
    const lines = []
    for await (const p of progress) lines.push(zProgressChunk.parse(p))
    expect(steps(lines.map((l) => l.status))).toEqual([
      'pulling manifest',
      'downloading',
      'verifying sha256 digest',
      'writing manifest',
      'success',
    ])
    const downloads = lines.filter((l) => l.status.startsWith('downloading '))
    for (const d of downloads) {
      expect(d.status).toBe(`downloading ${d.digest}`)
      expect(d.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(d.completed).toBeLessThanOrEqual(d.total!)
    }
    const source = (await new Ollama({ host: a.url }).list()).models.find((m) => m.name === 'svc-tiny-chat:latest')!
    const pulled = (await client.list()).models.find((m) => m.name === name)!
    expect(pulled.digest).toBe(source.digest)
    expect(pulled.size).toBe(source.size)
    const out = await client.generate({ model: name, prompt: 'hi', stream: false, options: { seed: 1, num_predict: 4 } })
    const ref = await new Ollama({ host: a.url }).generate({ model: 'svc-tiny-chat', prompt: 'hi', stream: false, options: { seed: 1, num_predict: 4 } })
    expect(out.response).toBe(ref.response)
  })

  it('a second pull finds every layer present', async () => {
    const res = await new Ollama({ host: b.url }).pull({ model: `127.0.0.1:${a.port}/library/svc-tiny-chat:latest`, insecure: true, stream: false })
    expect(res.status).toBe('success')
  })

  it('pulls a short name from the configured registry URL', async () => {
    const res = await new Ollama({ host: fromDefault.url }).pull({ model: 'svc-tiny-embed', stream: false })
    expect(res.status).toBe('success')
    const embed = await new Ollama({ host: fromDefault.url }).embed({ model: 'svc-tiny-embed', input: 'x' })
    expect(embed.embeddings[0]).toHaveLength(64)
  })

  it('pushes to the other instance, which then lists and runs the model', async () => {
    const client = new Ollama({ host: b.url })
    const target = `127.0.0.1:${a.port}/library/pushed:v1`
    await client.copy({ source: `127.0.0.1:${a.port}/library/svc-tiny-chat:latest`, destination: target })
    await client.create({ model: target, from: target, system: 'pushed system', stream: false })
    const progress = await client.push({ model: target, insecure: true, stream: true })
    const statuses: string[] = []
    for await (const p of progress) statuses.push(zProgressChunk.parse(p).status)
    expect(statuses[0]).toBe('retrieving manifest')
    expect(statuses.slice(-2)).toEqual(['pushing manifest', 'success'])
    expect(statuses.some((s) => /^pushing sha256:[0-9a-f]{64}$/.test(s))).toBe(true)
    const remote = new Ollama({ host: a.url })
    const listed = (await remote.list()).models.find((m) => m.name === 'pushed:v1')!
    const local = (await client.list()).models.find((m) => m.name === target)!
    expect(listed.digest).toBe(local.digest)
    expect((await remote.show({ model: 'pushed:v1' })).system).toBe('pushed system')
    expect((await remote.generate({ model: 'pushed:v1', prompt: 'x', stream: false, options: { num_predict: 2 } })).done).toBe(true)
  })

  it('errors: unknown model → 404 (non-streamed) or a final {error} line (streamed); pushing a missing model → 404', async () => {
    const client = new Ollama({ host: b.url })
    await expect(client.pull({ model: `127.0.0.1:${a.port}/library/nothing:latest`, insecure: true, stream: false })).rejects.toMatchObject({
      status_code: 404,
    })
    const res = await fetch(`${b.url}/api/pull`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: `127.0.0.1:${a.port}/library/nothing:latest`, insecure: true }),
    })
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l))
    expect(lines[0]).toEqual({ status: 'pulling manifest' })
    expect(lines.at(-1)).toEqual({ error: 'pull model manifest: file does not exist' })
    await expect(client.push({ model: `127.0.0.1:${a.port}/library/none:latest`, insecure: true })).rejects.toMatchObject({ status_code: 404 })
  })

  it('a registry that cannot be reached: documented 502 {error} naming the step (non-streamed), a final {error} line (streamed)', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
    // Both registries allow-listed; the name that does not resolve fails in the stub resolver, not in real DNS.
    const c = await startTestModelServer({
      engine,
      config: { registries: [`127.0.0.1:${closed}`, 'registry.invalid'] },
      resolveHost: async (host) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
      },
    })
    const post = (path: string, body: unknown) => fetch(`${c.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    for (const model of [`127.0.0.1:${closed}/library/x:latest`, 'registry.invalid/library/x:latest']) {
      const res = await post('/api/pull', { model, insecure: true, stream: false })
      expect(res.status, model).toBe(502)
      expect((await res.json()).error).toMatch(/^pull model manifest: /)
      const streamed = await post('/api/pull', { model, insecure: true })
      expect(streamed.status).toBe(200)
      const lines = (await streamed.text()).trimEnd().split('\n').map((l) => JSON.parse(l))
      expect(lines.at(-1).error).toMatch(/^pull model manifest: /)
    }
    const target = `127.0.0.1:${closed}/library/y:latest`
    expect((await post('/api/copy', { source: 'svc-tiny-chat', destination: target })).status).toBe(200)
    const pushed = await post('/api/push', { model: target, insecure: true, stream: false })
    expect(pushed.status).toBe(502)
    expect((await pushed.json()).error).toMatch(/^push /)
    expect(c.mismatches).toEqual([])
    await c.close()
  })

  it('registry side: unknown manifest/blob are OCI 404s; a bad upload digest is 400', async () => {
    expect((await fetch(`${a.url}/v2/library/none/manifests/latest`)).status).toBe(404)
    expect((await fetch(`${a.url}/v2/library/none/blobs/sha256:${'0'.repeat(64)}`, { method: 'HEAD' })).status).toBe(404)
    const start = await fetch(`${a.url}/v2/library/x/blobs/uploads/`, { method: 'POST' })
    expect(start.status).toBe(202)
    const location = new URL(start.headers.get('location')!, a.url)
    await fetch(location, { method: 'PATCH', body: new Uint8Array([1, 2, 3]), headers: { 'content-type': 'application/octet-stream' } })
    location.searchParams.set('digest', `sha256:${'1'.repeat(64)}`)
    const done = await fetch(location, { method: 'PUT' })
    expect(done.status).toBe(400)
    expect((await done.json()).errors[0].code).toBe('DIGEST_INVALID')
  })

  it('registry side: every error is {errors:[{code,message,detail}]} with a documented status', async () => {
    const zero = `sha256:${'0'.repeat(64)}`
    const oci = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as any })
    const expectOci = (got: { status: number; type: string; body: any }, status: number, code: string) => {
      expect(got.status).toBe(status)
      expect(got.type).toMatch(/^application\/json/)
      expect(got.body.errors).toHaveLength(1)
      expect(got.body.errors[0]).toEqual({ code, message: expect.any(String), detail: expect.anything() })
    }
    expectOci(await oci(await fetch(`${a.url}/v2/library/none/manifests/latest`)), 404, 'MANIFEST_UNKNOWN')
    expectOci(await oci(await fetch(`${a.url}/v2/library/none/blobs/${zero}`)), 404, 'BLOB_UNKNOWN')
    expectOci(await oci(await fetch(`${a.url}/v2/library/none/blobs/sha256:nothex`)), 400, 'DIGEST_INVALID')
    expectOci(await oci(await fetch(`${a.url}/v2/library/bad name/manifests/latest`)), 400, 'NAME_INVALID')
    expectOci(await oci(await fetch(`${a.url}/v2/library/x/manifests/-bad`)), 400, 'MANIFEST_INVALID')
    expectOci(await oci(await fetch(`${a.url}/v2/a/b/c/manifests/latest`)), 404, 'NAME_UNKNOWN')
    expectOci(await oci(await fetch(`${a.url}/v2/library/x/manifests/latest`, { method: 'DELETE' })), 405, 'UNSUPPORTED')
    expectOci(await oci(await fetch(`${a.url}/v2/library/x/blobs/uploads/${'f'.repeat(8)}`, { method: 'PATCH', body: 'x' })), 404, 'BLOB_UPLOAD_UNKNOWN')
    const put = (body: string) =>
      fetch(`${a.url}/v2/library/x/manifests/latest`, { method: 'PUT', headers: { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' }, body })
    expectOci(await oci(await put('{"schemaVersion":')), 400, 'MANIFEST_INVALID')
    expectOci(await oci(await put(JSON.stringify({ schemaVersion: 2, layers: [] }))), 400, 'MANIFEST_INVALID')
    const unknownBlob = await oci(await put(JSON.stringify({ schemaVersion: 2, config: { mediaType: 'x', digest: zero, size: 1 }, layers: [] })))
    expectOci(unknownBlob, 400, 'MANIFEST_BLOB_UNKNOWN')
    expect(unknownBlob.body.errors[0].detail).toEqual({ digest: zero })
    // descriptors that would be stored and break every later listing or load: a null layer, a size that is no size,
    // a size that is not the blob's
    const bytes = Buffer.from('{"a":1}')
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    expect((await fetch(`${a.url}/api/blobs/${digest}`, { method: 'POST', body: bytes })).status).toBe(201)
    const config = { mediaType: 'application/vnd.docker.container.image.v1+json', digest, size: bytes.length }
    expectOci(await oci(await put(JSON.stringify({ schemaVersion: 2, config, layers: [null] }))), 400, 'MANIFEST_INVALID')
    expectOci(await oci(await put(JSON.stringify({ schemaVersion: 2, config: { ...config, size: 'x' }, layers: [] }))), 400, 'MANIFEST_INVALID')
    const wrongSize = await oci(await put(JSON.stringify({ schemaVersion: 2, config: { ...config, size: 5 }, layers: [] })))
    expectOci(wrongSize, 400, 'MANIFEST_INVALID')
    expect(wrongSize.body.errors[0].detail).toMatchObject({ digest, size: 5, blob_size: bytes.length })
    // HEAD answers the same statuses without a body.
    expect((await fetch(`${a.url}/v2/library/none/manifests/latest`, { method: 'HEAD' })).status).toBe(404)
    expect((await fetch(`${a.url}/v2/library/none/blobs/sha256:nothex`, { method: 'HEAD' })).status).toBe(400)
    expect((await fetch(`${a.url}/v2/.hidden/x/manifests/latest`, { method: 'HEAD' })).status).toBe(400)
    expectOci(await oci(await fetch(`${a.url}/v2/.hidden/x/manifests/latest`)), 400, 'NAME_INVALID')
  })

  it('registry side: a manifest whose layers would make a model that cannot be shown or run is refused, not listed', async () => {
    const upload = async (bytes: Buffer) => {
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
      expect((await fetch(`${a.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
      return { digest, size: bytes.length }
    }
    const good = (await (await fetch(`${a.url}/v2/library/svc-tiny-chat/manifests/latest`)).json()) as { config: unknown; layers: Array<{ mediaType: string }> }
    const model = good.layers.find((l) => l.mediaType === 'application/vnd.ollama.image.model')!
    const layer = async (mediaType: string, bytes: Buffer) => ({ mediaType, ...(await upload(bytes)) })
    const cases: Array<[string, unknown, unknown[], RegExp]> = [
      ['params-not-json', good.config, [model, await layer('application/vnd.ollama.image.params', Buffer.from('temperature 0.2'))], /params layer is not JSON/],
      ['params-array', good.config, [model, await layer('application/vnd.ollama.image.params', Buffer.from('[1,2]'))], /params layer is not a JSON object/],
      ['messages-object', good.config, [model, await layer('application/vnd.ollama.image.messages', Buffer.from('{"role":"user"}'))], /messages layer/],
      ['model-not-gguf', good.config, [await layer('application/vnd.ollama.image.model', Buffer.from('plain text, not weights'))], /not a GGUF file/],
      ['model-gguf-truncated', good.config, [await layer('application/vnd.ollama.image.model', Buffer.from('GGUF\x03\x00\x00\x00'))], /model layer cannot be read: the GGUF header names no architecture/],
      ['config-not-json', await layer('application/vnd.docker.container.image.v1+json', Buffer.from('<config/>')), [model], /config layer is not JSON/],
      ['license-too-large', good.config, [model, await layer('application/vnd.ollama.image.license', Buffer.alloc(4 * 1024 * 1024 + 1, 0x61))], /license layer is larger than/],
    ]
    for (const [name, config, layers, reason] of cases) {
      const res = await fetch(`${a.url}/v2/library/${name}/manifests/latest`, {
        method: 'PUT',
        headers: { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' },
        body: JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.docker.distribution.manifest.v2+json', config, layers }),
      })
      expect(res.status, name).toBe(400)
      const error = ((await res.json()) as { errors: Array<{ code: string; detail: { digest: string; reason: string } }> }).errors[0]!
      expect(error.code, name).toBe('MANIFEST_INVALID')
      expect(error.detail.reason, name).toMatch(reason)
      expect(error.detail.digest, name).toMatch(/^sha256:[0-9a-f]{64}$/)
      const show = await fetch(`${a.url}/api/show`, { method: 'POST', body: JSON.stringify({ model: name }) })
      expect(show.status, name).toBe(404)
    }
    const listed = (await new Ollama({ host: a.url }).list()).models.map((m) => m.name)
    expect(listed.filter((n) => cases.some(([name]) => n.startsWith(`${name}:`)))).toEqual([])
  })

  it('a pull whose layers would make an unusable model fails (502) and writes no model', async () => {
    // A registry that serves a manifest whose parameters layer is not JSON (what `a` itself now refuses to store).
    const params = Buffer.from('not json')
    const good = (await (await fetch(`${a.url}/v2/library/svc-tiny-chat/manifests/latest`)).json()) as { config: { digest: string }; layers: Array<{ digest: string; mediaType: string }> }
    const paramsDigest = `sha256:${createHash('sha256').update(params).digest('hex')}`
    const manifest = JSON.stringify({ ...good, layers: [...good.layers.filter((l) => l.mediaType.endsWith('.model')), { mediaType: 'application/vnd.ollama.image.params', digest: paramsDigest, size: params.length }] })
    const { createServer: createHttpServer } = await import('node:http')
    const fake = createHttpServer(async (req, res) => {
      if (req.url?.endsWith('/manifests/latest')) return void res.writeHead(200, { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' }).end(manifest)
      const digest = req.url?.split('/blobs/')[1]
      if (digest === paramsDigest) return void res.writeHead(200).end(params)
      if (digest) return void res.writeHead(200).end(Buffer.from(await (await fetch(`${a.url}/v2/library/svc-tiny-chat/blobs/${digest}`)).arrayBuffer()))
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
    const port = (fake.address() as AddressInfo).port
    const c = await startTestModelServer({ engine, config: { installDefaults: false, registries: [`127.0.0.1:${port}`] } })
    try {
      const model = `127.0.0.1:${port}/library/bad-params:latest`
      const res = await fetch(`${c.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model, insecure: true, stream: false }) })
      expect(res.status).toBe(502)
      expect(((await res.json()) as { error: string }).error).toMatch(new RegExp(`layer ${paramsDigest}: the params layer is not JSON`))
      expect((await new Ollama({ host: c.url }).list()).models).toEqual([])
      expect(c.mismatches).toEqual([])
    } finally {
      await c.close()
      await new Promise((resolve) => fake.close(resolve))
    }
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect([...a.mismatches, ...b.mismatches, ...fromDefault.mismatches]).toEqual([])
  })
})
