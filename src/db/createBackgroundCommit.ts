import { type FileHandle, open } from 'node:fs/promises'
import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from './Database.js'

/**
 * Runs `write` (statements through the Kysely it is given) so that its commit does not hold the event loop
 * while the disk syncs, and resolves once the write is as durable as a commit of the configured level.
 */
export type BackgroundCommit = <T>(write: (db: Kysely<Database>) => Promise<T>) => Promise<T>

export type CreateBackgroundCommitParameters = {
  db: Kysely<Database>
  /** The connection under `db` (better-sqlite3); absent for PostgreSQL. */
  sqlite?: SQLite.Database | undefined
  /** The SQLite file (`:memory:` has nothing to sync). */
  path?: string | undefined
  synchronous: 'full' | 'normal'
  /** Syncs the write-ahead log's data to the disk (default: `fdatasync` on libuv's threadpool). */
  syncLog?: LogSync
  /** How long a `groupCommit` write waits for another commit's sync before starting its own (default `GROUP_DELAY_MS`). */
  groupDelayMs?: number
}

/**
 * The longest a grouped write stays unsynced when no other commit comes: short beside what a crash already loses
 * of it (it is written after the call's answer), long enough that a client's next call (its quota unit) meets it.
 */
export const GROUP_DELAY_MS = 50

export type LogSync = { sync: () => Promise<void>; close: () => Promise<void> }

/** The commit of a database without a background one (PostgreSQL, `synchronous=normal`, in memory, a handle built by hand): the write just runs. */
export function directCommit(db: Kysely<Database>): BackgroundCommit {
  return (write) => write(db)
}

/**
 * For writes nobody waits for before answering — the usage record of a call whose answer is already sent —
 * where an event loop held by a commit holds back whatever request comes next.
 *
 * On SQLite with `synchronous=full` every commit is an fsync on the event loop (better-sqlite3 is synchronous):
 * 0.3–1.5 ms in which the gateway serves nobody — and a client's next call, sent the moment the last one ended,
 * waits for it. Here the statements run with `synchronous=NORMAL` on the held connection (the writes reach the
 * write-ahead log with `write()`, no sync; the configured level is restored at once), and the log is then synced
 * with `fdatasync` on libuv's threadpool: the write is on the disk when the promise resolves, as a `full` commit
 * would be, and the event loop was free meanwhile. A sync already in flight may have started before this
 * commit: one more follows it, shared by every commit made meanwhile (a group commit under load). With
 * `synchronous=normal`, an in-memory database or PostgreSQL (a commit there is a round trip: the loop never
 * waits) `write` just runs.
 */
export function createBackgroundCommit({ db, sqlite, path, synchronous, syncLog, groupDelayMs = GROUP_DELAY_MS }: CreateBackgroundCommitParameters): {
  commit: BackgroundCommit
  /**
   * As `commit`, but the write's sync is the next one any commit starts, or one started `groupDelayMs` later
   * when none does: for a write nobody waits for (the usage record of an answered call), whose own `fdatasync`
   * would be most of its CPU (~0.3 ms of kernel time on a shared VM against ~0.1 ms for the statements) and
   * which the next call's quota unit syncs anyway. It still resolves only once the write is on the disk.
   */
  groupCommit: BackgroundCommit
  /** Closes what it opened (the log's file), after a last sync of the grouped writes; before the database closes. */
  close: () => Promise<void>
} {
  if (!sqlite || synchronous !== 'full' || path === undefined || path === ':memory:') return { commit: directCommit(db), groupCommit: directCommit(db), close: async () => undefined }
  const log = syncLog ?? walSync(`${path}-wal`)
  let running: Promise<void> | undefined
  let next: Promise<void> | undefined
  /** Grouped writes already made, waiting for a sync that starts after them. */
  let riders: { resolve: () => void; reject: (error: unknown) => void }[] = []
  let timer: NodeJS.Timeout | undefined
  /** An `fdatasync` of the log covers every write made before it starts: the riders so far go with it. */
  const startSync = (): Promise<void> => {
    const riding = riders
    riders = []
    clearTimeout(timer)
    timer = undefined
    const sync = log.sync()
    for (const rider of riding) sync.then(rider.resolve, rider.reject)
    return sync
  }
  const synced = (): Promise<void> => {
    if (!running) {
      running = startSync().finally(() => (running = undefined))
      return running
    }
    const after = () => {
      next = undefined
      return synced()
    }
    next ??= running.then(after, after)
    return next
  }
  const written = <T>(write: (db: Kysely<Database>) => Promise<T>): Promise<T> =>
    db.connection().execute(async (connection) => {
      // The connection is held (Kysely's SQLite driver has one, behind a mutex): no other statement runs at this level.
      // `exec`, not `pragma()`: no statement object built and read back; 1.6 µs the pair against 13 µs.
      sqlite.exec('PRAGMA synchronous = NORMAL')
      try {
        return await write(connection)
      } finally {
        sqlite.exec('PRAGMA synchronous = FULL')
      }
    })
  const commit: BackgroundCommit = async (write) => {
    const result = await written(write)
    await synced()
    return result
  }
  const groupCommit: BackgroundCommit = async (write) => {
    const result = await written(write)
    await new Promise<void>((resolve, reject) => {
      riders.push({ resolve, reject })
      timer ??= setTimeout(() => void synced().catch(() => undefined), groupDelayMs).unref()
    })
    return result
  }
  const close = async () => {
    // Grouped writes still waiting are synced now, not when their timer would have fired.
    if (riders.length > 0) await synced().catch(() => undefined)
    // A sync in flight finishes on the file it started with.
    await next?.catch(() => undefined)
    await running?.catch(() => undefined)
    await log.close()
  }
  return { commit, groupCommit, close }
}

/** `fdatasync` of the write-ahead log (the file stays the same while the database is open), on the threadpool. */
function walSync(walPath: string): LogSync {
  let file: Promise<FileHandle> | undefined
  let closed = false
  return {
    sync: async () => {
      // Closed with the database: its close (a checkpoint, synced, when it is the last connection) or the next
      // `full` commit of another connection syncs the log; a file opened again here would only leak.
      if (closed) return
      file ??= open(walPath, 'r+')
      try {
        await (await file).datasync()
      } catch (error) {
        const failed = file
        file = undefined
        await failed.then((f) => f.close()).catch(() => undefined)
        throw error
      }
    },
    close: async () => {
      closed = true
      const opened = file
      file = undefined
      await opened?.then((f) => f.close()).catch(() => undefined)
    },
  }
}
