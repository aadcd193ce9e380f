import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'

export type SpoolOptions = {
  db: Kysely<Database>
  /** Where large paid bytes wait: with several instances, a directory all of them mount at this path. */
  sharedDir: string
  /** This instance's scratch directory (temp copies of database-spooled bytes). */
  tmpDir: string
  /** Items up to this size wait in the database (0 = never). */
  dbMaxBytes: number
}

/** A spooled item as this instance can read it: a local file, and what to do once it is no longer needed. */
export type OpenedSpool = { path: string; release: () => Promise<void> }

const DB = 'db:'
const SHARED = 'shared:'

/**
 * Paid-but-not-yet-stored bytes, kept where any instance on the same database can finish the upload
 * (issue 19): small items in `storage_spool`, large ones in the shared spool directory. A reference
 * (`storage_uploads.spool_path`) is `db:<upload_id>`, `shared:<upload_id>` (resolved against each instance's
 * own `sharedDir`) or, for rows written before, a plain file path.
 */
export class Spool {
  readonly #db: Kysely<Database>
  readonly #sharedDir: string
  readonly #tmpDir: string
  readonly #dbMax: number

  constructor({ db, sharedDir, tmpDir, dbMaxBytes }: SpoolOptions) {
    this.#db = db
    this.#sharedDir = sharedDir
    this.#tmpDir = tmpDir
    this.#dbMax = dbMaxBytes
  }

  /**
   * Keeps the received temp file `tmpPath` for `uploadId`. Returns the reference to record and the local file
   * this instance uploads from (still the temp file for database-spooled items: the caller removes it).
   */
  async keep(uploadId: string, tmpPath: string, sizeBytes: bigint): Promise<{ ref: string; localPath: string; ownsLocal: boolean }> {
    if (sizeBytes <= BigInt(this.#dbMax)) {
      await this.#db.insertInto('storage_spool').values({ upload_id: uploadId, bytes: await readFile(tmpPath), created_at: Math.floor(Date.now() / 1000) }).execute()
      return { ref: `${DB}${uploadId}`, localPath: tmpPath, ownsLocal: true }
    }
    await mkdir(this.#sharedDir, { recursive: true })
    const path = join(this.#sharedDir, uploadId)
    await moveFile(tmpPath, path)
    return { ref: `${SHARED}${uploadId}`, localPath: path, ownsLocal: false }
  }

  /** A local file holding the bytes of `ref` (database items are copied to a temp file until `release`). */
  async open(ref: string): Promise<OpenedSpool> {
    if (ref.startsWith(DB)) {
      const row = await this.#db.selectFrom('storage_spool').select('bytes').where('upload_id', '=', ref.slice(DB.length)).executeTakeFirst()
      if (!row) throw new Error('spooled bytes missing (database)')
      await mkdir(this.#tmpDir, { recursive: true })
      const path = join(this.#tmpDir, `spool-${randomUUID()}`)
      await writeFile(path, row.bytes)
      return { path, release: () => rm(path, { force: true }) }
    }
    return { path: this.#filePath(ref), release: async () => undefined }
  }

  /** Drops the bytes of `ref` (stored, or the payment was refused). */
  async remove(ref: string): Promise<void> {
    if (ref.startsWith(DB)) {
      await this.#db.deleteFrom('storage_spool').where('upload_id', '=', ref.slice(DB.length)).execute()
      return
    }
    await rm(this.#filePath(ref), { force: true })
  }

  #filePath(ref: string): string {
    if (ref.startsWith(SHARED)) {
      const id = ref.slice(SHARED.length)
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error('invalid spool reference')
      return join(this.#sharedDir, id)
    }
    if (!isAbsolute(ref) && ref.includes('\0')) throw new Error('invalid spool reference')
    return ref
  }
}

/** `rename`, or copy + remove when the shared directory is another file system (a network mount). */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    await copyFile(from, to)
    await rm(from, { force: true })
  }
}
