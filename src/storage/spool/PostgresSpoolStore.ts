import { Readable } from 'node:stream'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../../db/Database.js'
import { checkSpoolId, SpoolBytesMissingError, type SpoolStore } from './SpoolStore.js'

/** Rows of at most 1 MiB: one row in flight each way bounds memory (about 3 MiB with pg's hex text form). */
export const SPOOL_CHUNK_BYTES = 1024 * 1024

/**
 * Paid bytes in the shared PostgreSQL database (`storage_spool_chunks`, migration 0015: why chunked rows and
 * not large objects is told there). `put` cuts the stream into 1 MiB rows inserted one at a time; `openRead`
 * selects them one at a time as the reader asks. A put that fails midway deletes what it wrote; a reader of a
 * torn write (a replica killed mid-put) finds fewer bytes than the upload's size (`Spool.open` checks it).
 */
export class PostgresSpoolStore implements SpoolStore {
  readonly kind = 'pg' as const
  readonly #db: Kysely<Database>
  readonly #chunkBytes: number

  constructor(db: Kysely<Database>, { chunkBytes = SPOOL_CHUNK_BYTES }: { chunkBytes?: number } = {}) {
    this.#db = db
    this.#chunkBytes = chunkBytes
  }

  async put(id: string, source: Readable): Promise<void> {
    checkSpoolId(id)
    await this.delete(id)
    const createdAt = Math.floor(Date.now() / 1000)
    let seq = 0
    let chunk = Buffer.allocUnsafe(this.#chunkBytes)
    let filled = 0
    // One insert in flight while the next chunk fills: the disk read and the database write overlap, and
    // memory stays at two chunks.
    let inFlight: Promise<unknown> = Promise.resolve()
    const flush = async () => {
      await inFlight
      const row = { upload_id: id, seq, bytes: chunk.subarray(0, filled), created_at: createdAt }
      inFlight = this.#db.insertInto('storage_spool_chunks').values(row).execute()
      inFlight.catch(() => undefined) // awaited at the next flush or at the end
      seq++
      chunk = Buffer.allocUnsafe(this.#chunkBytes)
      filled = 0
    }
    try {
      for await (const piece of source) {
        const bytes = typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer)
        let offset = 0
        while (offset < bytes.length) {
          const n = Math.min(bytes.length - offset, this.#chunkBytes - filled)
          bytes.copy(chunk, filled, offset, offset + n)
          filled += n
          offset += n
          if (filled === this.#chunkBytes) await flush()
        }
      }
      if (filled > 0 || seq === 0) await flush()
      await inFlight
    } catch (error) {
      source.destroy()
      await inFlight.catch(() => undefined)
      await this.delete(id).catch(() => undefined)
      throw error
    }
  }

  async openRead(id: string): Promise<Readable> {
    checkSpoolId(id)
    const db = this.#db
    const first = await db.selectFrom('storage_spool_chunks').select('bytes').where('upload_id', '=', id).where('seq', '=', 0).executeTakeFirst()
    if (!first) throw new SpoolBytesMissingError(this.kind, id)
    async function* chunks(): AsyncGenerator<Buffer> {
      yield first!.bytes
      for (let seq = 1; ; seq++) {
        const row = await db.selectFrom('storage_spool_chunks').select('bytes').where('upload_id', '=', id).where('seq', '=', seq).executeTakeFirst()
        if (!row) return
        yield row.bytes
      }
    }
    // one chunk fetched ahead of the reader at most (the SELECT overlaps the reader's work on the previous one)
    return Readable.from(chunks(), { objectMode: false, highWaterMark: this.#chunkBytes })
  }

  async delete(id: string): Promise<void> {
    await this.#db.deleteFrom('storage_spool_chunks').where('upload_id', '=', checkSpoolId(id)).execute()
  }

  async size(id: string): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('storage_spool_chunks')
      .select([sql<number>`count(*)`.as('chunks'), sql<number | null>`sum(length(bytes))`.as('bytes')])
      .where('upload_id', '=', checkSpoolId(id))
      .executeTakeFirst()
    return row && Number(row.chunks) > 0 ? Number(row.bytes ?? 0) : undefined
  }
}
