import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseModelName } from './ModelName.js'
import { LAYER, ModelStore, newManifest, type Manifest } from './ModelStore.js'

describe('ModelStore lookups (cached between requests)', () => {
  let dir: string
  let store: ModelStore
  const name = parseModelName('cached:latest')

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'model-store-'))
    store = new ModelStore(dir)
    await store.init()
  })
  afterEach(async () => rm(dir, { recursive: true, force: true }))

  const manifestWith = async (template: string, license = 'MIT'): Promise<Manifest> => {
    const lease = store.lease()
    const config = await store.putConfig({
      model_format: 'gguf',
      model_family: 'llama',
      model_families: ['llama'],
      model_type: '1M',
      file_type: 'F32',
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: [] },
    }, lease)
    const model = await store.blobs.putBytes('not really a gguf')
    const manifest = newManifest(config, [
      { mediaType: LAYER.model, ...model },
      await store.putLayer(LAYER.template, template, lease),
      await store.putLayer(LAYER.license, license, lease),
    ])
    lease.release()
    return manifest
  }

  it('sees a manifest replaced through the store', async () => {
    await store.put(name, await manifestWith('first {{ .Prompt }}'))
    const first = await store.resolve((await store.get(name))!)
    expect(first.template).toBe('first {{ .Prompt }}')

    await store.put(name, await manifestWith('second {{ .Prompt }}'))
    const entry = (await store.get(name))!
    expect(entry.digest).not.toBe(first.digest)
    expect((await store.resolve(entry)).template).toBe('second {{ .Prompt }}')
  })

  it('sees a manifest rewritten in place by another process, even at the same size', async () => {
    const a = await manifestWith('AAAA')
    const b = await manifestWith('BBBB')
    await store.put(name, a)
    expect((await store.resolve((await store.get(name))!)).template).toBe('AAAA')

    // Same byte length (only a digest differs), same inode: only the modification time tells them apart.
    const file = store.manifestPath(name)
    const bytes = JSON.stringify(b)
    expect(bytes.length).toBe((await readFile(file)).length)
    await writeFile(file, bytes)
    const later = new Date(Date.now() + 2_000)
    await utimes(file, later, later)

    const entry = (await store.get(name))!
    expect(entry.manifest.layers.map((l) => l.digest)).toEqual(b.layers.map((l) => l.digest))
    expect((await store.resolve(entry)).template).toBe('BBBB')
  })

  it('forgets a removed model, and one deleted behind its back', async () => {
    await store.put(name, await manifestWith('x'))
    expect(await store.get(name)).toBeDefined()
    expect(await store.remove(name)).toBeDefined()
    expect(await store.get(name)).toBeUndefined()

    await store.put(name, await manifestWith('y'))
    expect(await store.get(name)).toBeDefined()
    await rm(store.manifestPath(name))
    expect(await store.get(name)).toBeUndefined()
  })

  it('gives every caller its own record', async () => {
    await store.put(name, await manifestWith('t', 'Apache-2.0'))
    const entry = (await store.get(name))!
    const mine = await store.resolve(entry)
    mine.license.push('edited')
    mine.messages.push({ role: 'user', content: 'edited' })
    const theirs = await store.resolve(entry)
    expect(theirs.license).toEqual(['Apache-2.0'])
    expect(theirs.messages).toEqual([])
  })
})
