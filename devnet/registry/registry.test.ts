/**
 * The devnet model registry: the model server pulls from it with the client it uses for registry.ollama.ai
 * (allow-listed as the operator lists any registry), the stock `ollama` client reads the same progress, the
 * pulled model answers /api/show and generates; the registry answers as the distribution API does (digests,
 * ranges, unknown names and blobs, anonymous pushes refused).
 */
import { createHash } from 'node:crypto'
import { Ollama } from 'ollama'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zProgressChunk } from '../../generated/modelserver/zod.gen.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'
import { type RegistryPeer, startRegistry } from './startRegistry.js'

let engine: Engine
let registry: RegistryPeer
let modelServer: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  registry = await startRegistry()
  modelServer = await startTestModelServer({ engine, config: { installDefaults: false, registries: ['registry.ollama.ai', registry.host] } })
}, 60_000)
afterAll(async () => {
  await modelServer?.close()
  await registry?.close()
  await engine?.dispose()
})

describe('devnet model registry', () => {
  it('the model server pulls its model (every status of seed 001 §3.2, in order), shows it and generates with it', async () => {
    const client = new Ollama({ host: modelServer.url })
    const name = registry.models[0]!
    expect(name).toBe(`${registry.host}/library/tiny-chat:latest`)
    const lines = []
    for await (const p of await client.pull({ model: name, insecure: true, stream: true })) lines.push(zProgressChunk.parse(p))
    const steps = lines.map((l) => (l.status.startsWith('downloading ') ? 'downloading' : l.status)).filter((s, i, all) => s !== all[i - 1])
    expect(steps).toEqual(['pulling manifest', 'downloading', 'verifying sha256 digest', 'writing manifest', 'success'])
    // every layer and the config are downloaded: weights, parameters, licence, config
    expect(new Set(lines.filter((l) => l.digest).map((l) => l.digest)).size).toBe(4)
    const shown = await client.show({ model: name })
    expect(shown.details.family).toBe('llama')
    expect(shown.license).toMatch(/devnet/)
    const out = await client.generate({ model: name, prompt: 'hi', stream: false, options: { seed: 1, num_predict: 3 } })
    expect(out.done).toBe(true)
    expect(modelServer.mismatches).toEqual([])
  }, 120_000)

  it('serves manifests by tag and by digest with Docker-Content-Digest, blobs whole and by range', async () => {
    const repo = `${registry.url}/v2/library/tiny-chat`
    const byTag = await fetch(`${repo}/manifests/latest`)
    expect(byTag.status).toBe(200)
    expect(byTag.headers.get('content-type')).toBe('application/vnd.docker.distribution.manifest.v2+json')
    const bytes = Buffer.from(await byTag.arrayBuffer())
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    expect(byTag.headers.get('docker-content-digest')).toBe(digest)
    expect((await fetch(`${repo}/manifests/${digest}`)).status).toBe(200)
    const head = await fetch(`${repo}/manifests/1m`, { method: 'HEAD' })
    expect(head.headers.get('docker-content-digest')).toBe(digest)
    const layer = (JSON.parse(bytes.toString('utf8')) as { layers: { digest: string; size: number }[] }).layers[0]!
    const whole = Buffer.from(await (await fetch(`${repo}/blobs/${layer.digest}`)).arrayBuffer())
    expect(whole.byteLength).toBe(layer.size)
    expect(`sha256:${createHash('sha256').update(whole).digest('hex')}`).toBe(layer.digest)
    const part = await fetch(`${repo}/blobs/${layer.digest}`, { headers: { range: 'bytes=10-19' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${layer.size}`)
    expect(Buffer.from(await part.arrayBuffer())).toEqual(whole.subarray(10, 20))
  })

  it('answers unknown names, tags and blobs, bad digests and anonymous pushes in the distribution error shape', async () => {
    const code = async (res: Response) => ((await res.json()) as { errors: { code: string }[] }).errors[0]!.code
    const unknownTag = await fetch(`${registry.url}/v2/library/tiny-chat/manifests/nope`)
    expect([unknownTag.status, await code(unknownTag)]).toEqual([404, 'MANIFEST_UNKNOWN'])
    const unknownName = await fetch(`${registry.url}/v2/library/llama3/manifests/latest`)
    expect([unknownName.status, await code(unknownName)]).toEqual([404, 'NAME_UNKNOWN'])
    const unknownBlob = await fetch(`${registry.url}/v2/library/tiny-chat/blobs/sha256:${'0'.repeat(64)}`)
    expect([unknownBlob.status, await code(unknownBlob)]).toEqual([404, 'BLOB_UNKNOWN'])
    const badDigest = await fetch(`${registry.url}/v2/library/tiny-chat/blobs/md5:abc`)
    expect([badDigest.status, await code(badDigest)]).toEqual([400, 'DIGEST_INVALID'])
    const push = await fetch(`${registry.url}/v2/library/tiny-chat/blobs/uploads/`, { method: 'POST' })
    expect(push.headers.get('www-authenticate')).toMatch(/^Bearer realm=/)
    expect([push.status, await code(push)]).toEqual([401, 'UNAUTHORIZED'])
    const wrongMethod = await fetch(`${registry.url}/v2/library/tiny-chat/manifests/latest`, { method: 'DELETE' })
    expect([wrongMethod.status, wrongMethod.headers.get('allow'), await code(wrongMethod)]).toEqual([405, 'GET, HEAD', 'UNSUPPORTED'])
  })

  it('the model server refuses the registry until the operator lists it', async () => {
    const strict = await startTestModelServer({ engine, config: { installDefaults: false } })
    try {
      const res = await fetch(`${strict.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: registry.models[0], insecure: true }) })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toMatch(/not allowed/)
    } finally {
      await strict.close()
    }
  })
})
