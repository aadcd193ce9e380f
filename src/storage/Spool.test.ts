import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { readStorageConfig } from './config.js'
import { Spool } from './Spool.js'
import { createSpool } from './spool/createSpool.js'
import { LocalDirSpoolStore } from './spool/LocalDirSpoolStore.js'
import { PostgresSpoolStore } from './spool/PostgresSpoolStore.js'

let handle: DatabaseHandle
let dir: string
beforeAll(async () => {
  handle = await createDatabase({ url: ':memory:' })
  dir = await mkdtemp(join(tmpdir(), 'spool-unit-'))
})
afterAll(async () => {
  await handle?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('Spool', () => {
  it('the chunked-row store is refused on SQLite (one instance: the spool directory is its store)', () => {
    expect(() => createSpool(handle.db, readStorageConfig({ SERVICE_STORAGE__SPOOL_STORE: 'postgres' }))).toThrow(ConfigError)
    expect(createSpool(handle.db, readStorageConfig({ SERVICE_DATA_DIR: dir })).store).toBeInstanceOf(LocalDirSpoolStore)
  })

  it('a write torn by a crash (a chunk missing) is an error when opened, never a shorter upload', async () => {
    // the chunked-row store's queries are plain SQL: SQLite stands in for PostgreSQL here
    const store = new PostgresSpoolStore(handle.db, { chunkBytes: 1024 })
    const local = new LocalDirSpoolStore(join(dir, 'paid'))
    const spool = new Spool({ db: handle.db, store, local, tmpDir: join(dir, 'tmp'), dbMaxBytes: 0 })
    const data = randomBytes(3000)
    const received = join(dir, 'received')
    await writeFile(received, data)
    const kept = await spool.keep('up_torn', received, 3000n)
    expect(kept).toMatchObject({ ref: 'pg:up_torn', localPath: received, ownsLocal: true })
    const whole = await spool.open(kept.ref, 3000)
    expect(await readFile(whole.path)).toEqual(data)
    await whole.release()
    await handle.db.deleteFrom('storage_spool_chunks').where('upload_id', '=', 'up_torn').where('seq', '=', 2).execute()
    await expect(spool.open(kept.ref, 3000)).rejects.toThrow('spooled bytes incomplete (2048 of 3000)')
    await spool.remove(kept.ref)
    expect(await store.size('up_torn')).toBeUndefined()
  })

  it('reads references of another store kind this instance knows, and refuses one it does not', async () => {
    const local = new LocalDirSpoolStore(join(dir, 'paid'))
    const spool = new Spool({ db: handle.db, store: local, local, tmpDir: join(dir, 'tmp'), dbMaxBytes: 0 })
    await expect(spool.open('s3:up_x', 1)).rejects.toThrow('spool store "s3" is not configured on this instance')
    await expect(spool.open('shared:../../etc/passwd')).rejects.toThrow('invalid spool id')
  })
})
