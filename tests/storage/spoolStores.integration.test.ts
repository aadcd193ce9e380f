/**
 * One contract for every `SpoolStore`: the local directory, PostgreSQL (chunked rows) and an
 * S3-compatible object store (a real `s3rver` over HTTP). Each suite opens two stores on one backend — two
 * replicas — and checks: what one puts the other reads byte for byte; missing bytes are an error, not an empty
 * stream; delete is idempotent; a put replaces; a failed put leaves nothing; ids cannot leave the store; a
 * 64 MiB upload goes in and out streamed, with bounded memory (measured in a child process: `support/spoolMemoryProbe.ts`).
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../../src/db/createDatabase.js'
import { LocalDirSpoolStore } from '../../src/storage/spool/LocalDirSpoolStore.js'
import { PostgresSpoolStore, SPOOL_CHUNK_BYTES } from '../../src/storage/spool/PostgresSpoolStore.js'
import { S3SpoolStore } from '../../src/storage/spool/S3SpoolStore.js'
import { SpoolBytesMissingError, type SpoolStore } from '../../src/storage/spool/SpoolStore.js'
import { startS3rver, type RunningS3 } from '../support/startS3rver.js'
import { createTestDatabase, type TestDatabase } from '../support/testDatabase.js'
import type { SpoolMemoryReport, SpoolProbeTarget } from './support/spoolMemoryProbe.js'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const probe = join(import.meta.dirname, 'support', 'spoolMemoryProbe.ts')

type Backend = { replicas: () => [SpoolStore, SpoolStore]; target: SpoolProbeTarget; close: () => Promise<void> }

const backends: [string, () => Promise<Backend>][] = [
  [
    'local directory',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'spool-local-'))
      return { replicas: () => [new LocalDirSpoolStore(dir), new LocalDirSpoolStore(dir)], target: { kind: 'local', dir }, close: () => rm(dir, { recursive: true, force: true }) }
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const database: TestDatabase = await createTestDatabase('postgres')
      const second: DatabaseHandle = await createDatabase({ url: database.url, migrate: false })
      return {
        replicas: () => [new PostgresSpoolStore(database.db), new PostgresSpoolStore(second.db)],
        target: { kind: 'postgres', url: database.url },
        close: async () => {
          await second.close()
          await database.close()
        },
      }
    },
  ],
  [
    'S3 (s3rver)',
    async () => {
      const s3: RunningS3 = await startS3rver()
      const a = new S3SpoolStore(s3.config)
      const b = new S3SpoolStore(s3.config)
      return {
        replicas: () => [a, b],
        target: { kind: 's3', config: s3.config },
        close: async () => {
          a.destroy()
          b.destroy()
          await s3.close()
        },
      }
    },
  ],
]

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const part of stream) parts.push(Buffer.from(part as Buffer))
  return Buffer.concat(parts)
}

describe.each(backends)('SpoolStore contract: %s', (name, open) => {
  let backend: Backend
  let a: SpoolStore
  let b: SpoolStore
  beforeAll(async () => {
    backend = await open()
    ;[a, b] = backend.replicas()
  }, 60_000)
  afterAll(async () => backend?.close())

  it('what one replica puts, another reads byte for byte (several chunks, a ragged end)', async () => {
    const data = randomBytes(2 * SPOOL_CHUNK_BYTES + SPOOL_CHUNK_BYTES / 2 + 3)
    await a.put('up_multi', Readable.from([data.subarray(0, 1000), data.subarray(1000)]), data.length)
    expect(await b.size('up_multi')).toBe(data.length)
    expect(sha(await readAll(await b.openRead('up_multi')))).toBe(sha(data))
  })

  it('missing bytes are an error, never an empty stream; size is undefined', async () => {
    await expect(b.openRead('up_never')).rejects.toBeInstanceOf(SpoolBytesMissingError)
    expect(await b.size('up_never')).toBeUndefined()
  })

  it('delete removes for every replica and is idempotent', async () => {
    await a.put('up_gone', Readable.from([Buffer.from('paid bytes')]), 10)
    await b.delete('up_gone')
    expect(await a.size('up_gone')).toBeUndefined()
    await expect(a.openRead('up_gone')).rejects.toBeInstanceOf(SpoolBytesMissingError)
    await a.delete('up_gone')
  })

  it('a second put replaces the first (no leftover tail)', async () => {
    await a.put('up_again', Readable.from([randomBytes(SPOOL_CHUNK_BYTES + 10)]), SPOOL_CHUNK_BYTES + 10)
    const second = randomBytes(100)
    await b.put('up_again', Readable.from([second]), second.length)
    expect(sha(await readAll(await a.openRead('up_again')))).toBe(sha(second))
    expect(await a.size('up_again')).toBe(100)
  })

  // What `Spool.open` relies on: a failed put never reads back as the whole upload (it checks the length against
  // the upload's size). PostgreSQL and the directory keep nothing; s3rver may keep the part it received (real S3
  // keeps no object from a PUT shorter than its Content-Length), which the store's delete after the failure races.
  it('a put whose source fails midway rejects and never reads back as complete', async () => {
    let sent = 0
    const failing = new Readable({
      read() {
        if (sent >= 3) return void this.destroy(new Error('client went away'))
        sent++
        this.push(randomBytes(SPOOL_CHUNK_BYTES / 2))
      },
    })
    await expect(a.put('up_torn', failing, 4 * SPOOL_CHUNK_BYTES)).rejects.toThrow()
    const left = await b.size('up_torn')
    if (name === 'S3 (s3rver)') expect(left === undefined || left < 4 * SPOOL_CHUNK_BYTES).toBe(true)
    else expect(left).toBeUndefined()
  })

  it('refuses ids outside the upload-id alphabet (no path or key escape)', async () => {
    for (const id of ['../etc/passwd', 'a/b', '', 'x'.repeat(65), 'up\0x']) {
      await expect(a.put(id, Readable.from([Buffer.from('x')]), 1)).rejects.toThrow('invalid spool id')
      await expect(a.openRead(id)).rejects.toThrow('invalid spool id')
    }
  })

  // In a process of its own (spoolMemoryProbe.ts says why): the same two replicas' backing, reopened there.
  it(`streams a 64 MiB upload in and out in bounded memory (${name})`, async () => {
    const total = 64 * 1024 * 1024
    const { stdout } = await run(process.execPath, ['--expose-gc', '--single-threaded-gc', '--import', 'tsx', probe, JSON.stringify(backend.target), String(total)], { cwd: root, timeout: 400_000 })
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as SpoolMemoryReport
    expect(r.sizeAfterPut).toBe(total)
    expect(r.digestMatches).toBe(true)
    // printed for the report; the times include a full collection every 250 ms (the sampler) on a shared machine
    console.log(`[spool ${name}] 64 MiB put ${r.putMs.toFixed(0)} ms (+${(r.putGrowth / 2 ** 20).toFixed(1)} MiB live buffers), read ${r.readMs.toFixed(0)} ms (+${(r.readGrowth / 2 ** 20).toFixed(1)} MiB live buffers)`)
    // A store keeps a chunk or two (1 MiB each) and its driver's buffers: a quarter of the upload is far above
    // that and far below holding it. The probe's collector runs on its main thread (`--single-threaded-gc`):
    // with concurrent sweeping, buffers already dead were still counted right after `gc()`, and the growth read
    // anywhere from +1 to +65.5 MiB for the same PostgreSQL put under CI load (2026-11-27, Node 24: a failure at
    // the old bound, the upload's size); on the main thread the same run under load reads +2.5 MiB every time.
    expect(r.putGrowth).toBeLessThan(total / 4)
    expect(r.readGrowth).toBeLessThan(total / 4)
    expect(r.sizeAfterDelete).toBeNull()
  }, 480_000)
})
