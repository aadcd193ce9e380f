import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { LocalDirSpoolStore } from './spool/LocalDirSpoolStore.js'
import type { SpoolStore } from './spool/SpoolStore.js'

export type SpoolOptions = {
  db: Kysely<Database>
  /** Where large paid bytes are written (`SERVICE_STORAGE__SPOOL_STORE`). */
  store: SpoolStore
  /** The spool directory store: reads `shared:` references whichever store now writes. */
  local: LocalDirSpoolStore
  /** Every other store this instance can read (references recorded before a change of `store`). */
  readers?: SpoolStore[]
  /** This instance's scratch directory (temp copies of bytes read from a shared store). */
  tmpDir: string
  /** Items up to this size wait in the database as one row (0 = never). */
  dbMaxBytes: number
}

/** A spooled item as this instance can read it: a local file, and what to do once it is no longer needed. */
export type OpenedSpool = { path: string; release: () => Promise<void> }

const DB = 'db:'

/**
 * Paid-but-not-yet-stored bytes, kept where any instance on the same database can finish the upload
 *: small items as one `storage_spool` row, larger ones in the configured `SpoolStore` —
 * PostgreSQL chunked rows (the default on PostgreSQL), an S3-compatible bucket, or the spool directory (one
 * instance, or a directory every instance mounts). A reference (`storage_uploads.spool_path`) is `db:<id>`,
 * `<store kind>:<id>` (`pg:`, `s3:`, `shared:` — the directory resolved against each instance's own
 * `SHARED_SPOOL_DIR`) or, for rows written by older releases, a plain file path.
 */
export class Spool {
  readonly #db: Kysely<Database>
  readonly #store: SpoolStore
  readonly #local: LocalDirSpoolStore
  readonly #readers: Map<string, SpoolStore>
  readonly #tmpDir: string
  readonly #dbMax: number

  constructor({ db, store, local, readers = [], tmpDir, dbMaxBytes }: SpoolOptions) {
    this.#db = db
    this.#store = store
    this.#local = local
    this.#readers = new Map([local, ...readers, store].map((s) => [s.kind, s]))
    this.#tmpDir = tmpDir
    this.#dbMax = dbMaxBytes
  }

  /** The store large paid bytes are written to. */
  get store(): SpoolStore {
    return this.#store
  }

  /**
   * Keeps the received temp file `tmpPath` for `uploadId`. Returns the reference to record and the local file
   * this instance uploads from (still the temp file unless the spool directory took it: the caller removes it
   * when `ownsLocal`).
   */
  async keep(uploadId: string, tmpPath: string, sizeBytes: bigint): Promise<{ ref: string; localPath: string; ownsLocal: boolean }> {
    if (sizeBytes <= BigInt(this.#dbMax)) {
      // at most DB_SPOOL_MAX_BYTES (≤ 64 MiB, 4 MiB by default) read at once
      await this.#db.insertInto('storage_spool').values({ upload_id: uploadId, bytes: await readFile(tmpPath), created_at: Math.floor(Date.now() / 1000) }).execute()
      return { ref: `${DB}${uploadId}`, localPath: tmpPath, ownsLocal: true }
    }
    if (this.#store === this.#local) {
      const path = await this.#local.adopt(uploadId, tmpPath)
      return { ref: `${this.#local.kind}:${uploadId}`, localPath: path, ownsLocal: false }
    }
    await this.#store.put(uploadId, createReadStream(tmpPath), Number(sizeBytes))
    return { ref: `${this.#store.kind}:${uploadId}`, localPath: tmpPath, ownsLocal: true }
  }

  /**
   * A local file holding the bytes of `ref`: in place for the spool directory, else streamed to a temp file
   * (bounded memory) until `release`. `expectedBytes`: the upload's size — fewer bytes (a write torn by a
   * crash) is an error, never a shorter upload.
   */
  async open(ref: string, expectedBytes?: number): Promise<OpenedSpool> {
    if (ref.startsWith(DB)) {
      const row = await this.#db.selectFrom('storage_spool').select('bytes').where('upload_id', '=', ref.slice(DB.length)).executeTakeFirst()
      if (!row) throw new Error('spooled bytes missing (database)')
      return this.#toTemp((path) => writeFile(path, row.bytes), expectedBytes)
    }
    const found = this.#storeOf(ref)
    if (!found) return { path: legacyPath(ref), release: async () => undefined }
    const { store, id } = found
    if (store === this.#local) {
      const path = this.#local.pathOf(id)
      await checkSize(path, expectedBytes)
      return { path, release: async () => undefined }
    }
    return this.#toTemp(async (path) => pipeline(await store.openRead(id), createWriteStream(path)), expectedBytes)
  }

  /** Drops the bytes of `ref` (stored, or the payment was refused). */
  async remove(ref: string): Promise<void> {
    if (ref.startsWith(DB)) {
      await this.#db.deleteFrom('storage_spool').where('upload_id', '=', ref.slice(DB.length)).execute()
      return
    }
    const found = this.#storeOf(ref)
    if (found) await found.store.delete(found.id)
    else await rm(legacyPath(ref), { force: true })
  }

  async #toTemp(write: (path: string) => Promise<unknown>, expectedBytes: number | undefined): Promise<OpenedSpool> {
    await mkdir(this.#tmpDir, { recursive: true })
    const path = join(this.#tmpDir, `spool-${randomUUID()}`)
    const release = () => rm(path, { force: true })
    try {
      await write(path)
      await checkSize(path, expectedBytes)
    } catch (error) {
      await release()
      throw error
    }
    return { path, release }
  }

  /** The store of a `<kind>:<id>` reference; undefined for a legacy plain path. */
  #storeOf(ref: string): { store: SpoolStore; id: string } | undefined {
    const match = /^([a-z0-9]+):(.*)$/s.exec(ref)
    if (!match || isAbsolute(ref)) return undefined
    const store = this.#readers.get(match[1]!)
    // e.g. `s3:` after S3 was unconfigured: the bytes are somewhere this instance cannot read
    if (!store) throw new Error(`spool store "${match[1]}" is not configured on this instance`)
    return { store, id: match[2]! }
  }
}

function legacyPath(ref: string): string {
  if (ref.includes('\0')) throw new Error('invalid spool reference')
  return ref
}

async function checkSize(path: string, expectedBytes: number | undefined): Promise<void> {
  if (expectedBytes === undefined) return
  const size = (await stat(path)).size
  if (size !== expectedBytes) throw new Error(`spooled bytes incomplete (${size} of ${expectedBytes})`)
}
