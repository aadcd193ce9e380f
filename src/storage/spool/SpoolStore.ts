import type { Readable } from 'node:stream'

/**
 * Where paid-but-not-yet-stored bytes wait: one seam, three engines — a local directory
 * (`LocalDirSpoolStore`, one instance, or several that mount one directory), PostgreSQL (`PostgresSpoolStore`,
 * chunked rows, the default on PostgreSQL) and an S3-compatible object store (`S3SpoolStore`). Every replica on
 * the same database and configuration reads what any of them put, so a survivor can finish a dead replica's
 * paid upload. Each call streams: memory stays bounded whatever the size (tests/storage/spoolStores).
 * `id` is an upload id (`[A-Za-z0-9_-]{1,64}`); implementations refuse anything else.
 */
export interface SpoolStore {
  /** The reference prefix recorded in `storage_uploads.spool_path` (`shared`, `pg`, `s3`). */
  readonly kind: SpoolStoreKind
  /** Stores `source` under `id` (replacing what was there); `sizeBytes` is its exact length. */
  put(id: string, source: Readable, sizeBytes: number): Promise<void>
  /** The bytes of `id`, streamed; throws `SpoolBytesMissingError` when there are none. */
  openRead(id: string): Promise<Readable>
  /** Drops `id`; nothing there is not an error. */
  delete(id: string): Promise<void>
  /** The stored length of `id`, or undefined when there is nothing. */
  size(id: string): Promise<number | undefined>
}

export type SpoolStoreKind = 'shared' | 'pg' | 's3'

/** A store asked for bytes it does not hold (never written, already removed, or a torn write). */
export class SpoolBytesMissingError extends Error {
  constructor(kind: SpoolStoreKind, id: string) {
    super(`spooled bytes missing (${kind}:${id})`)
    this.name = 'SpoolBytesMissingError'
  }
}

const ID = /^[A-Za-z0-9_-]{1,64}$/

/** Ids become file names and object keys: only the upload id alphabet is accepted. */
export function checkSpoolId(id: string): string {
  if (!ID.test(id)) throw new Error('invalid spool id')
  return id
}
