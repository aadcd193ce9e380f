import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Engine, EngineModel, LoadModelParams, ModelInfo } from '../engine/Engine.js'
import { parseModelName } from '../store/ModelName.js'
import type { ModelRecord } from '../store/ModelStore.js'
import { ResidencyManager } from './ResidencyManager.js'

/** An engine double whose models report a chosen memory size; records loads and unloads. */
class RecordingEngine implements Engine {
  readonly threads = 1
  readonly warnings: string[] = []
  readonly events: string[] = []
  constructor(private readonly sizes: Record<string, number>) {}
  async loadModel(params: LoadModelParams): Promise<EngineModel> {
    const file = path.basename(params.path)
    this.events.push(`load ${file}`)
    const events = this.events
    let unloaded = false
    return {
      path: params.path,
      name: params.name ?? file,
      kind: 'completion',
      info: {} as ModelInfo,
      contextLength: params.numCtx ?? 2048,
      sizeBytes: this.sizes[file] ?? 100,
      loadDurationNs: 1000,
      pending: 0,
      complete: async () => {
        throw new Error('not used')
      },
      chat: async () => {
        throw new Error('not used')
      },
      embed: async () => {
        throw new Error('not used')
      },
      unload: async () => {
        if (!unloaded) events.push(`unload ${file}`)
        unloaded = true
      },
    }
  }
  async inspect(): Promise<ModelInfo> {
    throw new Error('not used')
  }
  async dispose() {}
}

let dir: string
const record = async (name: string): Promise<ModelRecord> => {
  const modelPath = path.join(dir, name)
  await writeFile(modelPath, 'x')
  return {
    name: parseModelName(name),
    manifest: { schemaVersion: 2, mediaType: '', config: { mediaType: '', digest: '', size: 0 }, layers: [] },
    bytes: Buffer.from('{}'),
    digest: `sha256:${'0'.repeat(64)}`,
    modifiedAt: new Date(),
    size: 1,
    config: undefined,
    modelPath,
    modelDigest: name,
    template: undefined,
    system: undefined,
    parameters: undefined,
    license: [],
    messages: [],
  }
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'residency-'))
})

describe('ResidencyManager (seed §3.1)', () => {
  let manager: ResidencyManager | undefined
  afterEach(async () => manager?.dispose())

  it('loads on demand once, and keep_alive 0 unloads as soon as the request ends', async () => {
    const engine = new RecordingEngine({})
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 10, defaultNumCtx: 2048 })
    const a = await record('a')
    const l1 = await manager.acquire(a, { keepAliveMs: 60_000 })
    const l2 = await manager.acquire(a, { keepAliveMs: 60_000 })
    expect(engine.events).toEqual(['load a'])
    expect(l1.loadDurationNs).toBe(1000)
    expect(l2.loadDurationNs).toBe(0)
    await l1.release(60_000)
    expect(manager.list()).toHaveLength(1)
    await l2.release(0)
    expect(manager.list()).toHaveLength(0)
    expect(engine.events).toEqual(['load a', 'unload a'])
  })

  it('expires after keep_alive and sets expires_at; -1 keeps it forever', async () => {
    const engine = new RecordingEngine({})
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 10, defaultNumCtx: 2048 })
    const a = await record('a')
    const b = await record('b')
    const before = Date.now()
    await (await manager.acquire(a, { keepAliveMs: 150 })).release(150)
    await (await manager.acquire(b, { keepAliveMs: Infinity })).release(Infinity)
    const ra = manager.get(a)!
    expect(ra.expiresAt).toBeGreaterThanOrEqual(before + 150)
    expect(manager.get(b)!.expiresAt).toBe(Infinity)
    await new Promise((r) => setTimeout(r, 400))
    expect(manager.get(a)).toBeUndefined()
    expect(manager.get(b)).toBeDefined()
  })

  it('a later request moves the expiry', async () => {
    const engine = new RecordingEngine({})
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 10, defaultNumCtx: 2048 })
    const a = await record('a')
    await (await manager.acquire(a, { keepAliveMs: 100 })).release(100)
    await (await manager.acquire(a, { keepAliveMs: 60_000 })).release(60_000)
    await new Promise((r) => setTimeout(r, 250))
    expect(manager.get(a)).toBeDefined()
  })

  it('evicts the least recently used idle model when the memory budget would be exceeded', async () => {
    const engine = new RecordingEngine({ a: 400, b: 400, c: 400 })
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1000, maxQueue: 10, defaultNumCtx: 2048 })
    const [a, b, c] = await Promise.all([record('a'), record('b'), record('c')])
    await (await manager.acquire(a, { keepAliveMs: 60_000 })).release(60_000)
    await (await manager.acquire(b, { keepAliveMs: 60_000 })).release(60_000)
    // Touch a, so b is now the least recently used.
    await new Promise((r) => setTimeout(r, 5))
    await (await manager.acquire(a, { keepAliveMs: 60_000 })).release(60_000)
    await (await manager.acquire(c, { keepAliveMs: 60_000 })).release(60_000)
    expect(manager.list().map((r) => r.name).sort()).toEqual(['a:latest', 'c:latest'])
    expect(engine.events).toEqual(['load a', 'load b', 'load c', 'unload b'])
  })

  it('never evicts a model that is serving a request', async () => {
    const engine = new RecordingEngine({ a: 800, b: 800 })
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1000, maxQueue: 10, defaultNumCtx: 2048 })
    const [a, b] = await Promise.all([record('a'), record('b')])
    const busy = await manager.acquire(a, { keepAliveMs: 60_000 })
    await (await manager.acquire(b, { keepAliveMs: 60_000 })).release(60_000)
    expect(manager.get(a)).toBeDefined()
    await busy.release(60_000)
  })

  it('bounds the per-model queue with 503 server busy', async () => {
    const engine = new RecordingEngine({})
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 2, defaultNumCtx: 2048 })
    const a = await record('a')
    const l1 = await manager.acquire(a, { keepAliveMs: 60_000 })
    const l2 = await manager.acquire(a, { keepAliveMs: 60_000 })
    await expect(manager.acquire(a, { keepAliveMs: 60_000 })).rejects.toMatchObject({ status: 503, shortMessage: expect.stringMatching(/^server busy/) })
    await l1.release(60_000)
    const l3 = await manager.acquire(a, { keepAliveMs: 60_000 })
    await l2.release(60_000)
    await l3.release(60_000)
  })

  it('an unload asked while a request runs happens when it ends', async () => {
    const engine = new RecordingEngine({})
    manager = new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 10, defaultNumCtx: 2048 })
    const a = await record('a')
    const lease = await manager.acquire(a, { keepAliveMs: 60_000 })
    await manager.unload(a)
    expect(manager.get(a)).toBeDefined()
    await lease.release(60_000)
    expect(manager.get(a)).toBeUndefined()
  })
})
