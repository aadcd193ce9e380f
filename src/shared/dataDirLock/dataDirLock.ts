/**
 * `<data dir>/in-use.json`: the process using this data directory — `npm start` or a gateway started on its
 * own (`npm run serve`) — its pid, since when, and what it serves on which port, so a second one on the same
 * directory says so at once instead of writing the same SQLite database, vault and devnet files beside the
 * first. Taken with an exclusive create; a lock whose pid no longer runs `npm start` or the gateway (a SIGKILL,
 * a crash, a pid the system reused) is taken over. Removed when its process exits. The gateway `npm start`
 * runs is its child and works under its lock (src/shared/dataDirLock/holdDataDir.ts).
 */
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRunningHolder } from './lockHolders.js'

export type ListenedPort = { port: number; service: string; url?: string }

/** Who holds the directory: `npm start` (the whole stack) or a gateway on its own. Absent: `npm start`. */
export type LockProgram = 'npm start' | 'gateway'

export type DataDirLock = { pid: number; program?: LockProgram; startedAt: number; dataDir: string; ports: ListenedPort[] }

export type LockResult = { taken: true; stale?: DataDirLock } | { taken: false; holder: DataDirLock }

export const lockPath = (dataDir: string) => join(dataDir, 'in-use.json')

function read(path: string): DataDirLock | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DataDirLock
  } catch {
    return undefined
  }
}

/** The lock of `dataDir` as written, whether or not its process still runs. */
export const readDataDirLock = (dataDir: string): DataDirLock | undefined => read(lockPath(dataDir))

/** Takes the lock for this process, or says who holds it. */
export function takeDataDirLock(
  dataDir: string,
  program: LockProgram,
  ports: ListenedPort[],
  isRunning: (pid: number) => boolean = isRunningHolder,
): LockResult {
  mkdirSync(dataDir, { recursive: true })
  const path = lockPath(dataDir)
  const mine: DataDirLock = { pid: process.pid, program, startedAt: Date.now(), dataDir, ports }
  let stale: DataDirLock | undefined
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(mine, null, 2)}\n`, { flag: 'wx' })
      process.once('exit', () => releaseDataDirLock(dataDir))
      return stale ? { taken: true, stale } : { taken: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = read(path)
    // this very pid in the file is a former process's (a container's gateway is pid 1 at every start)
    if (holder && holder.pid !== process.pid && isRunning(holder.pid)) return { taken: false, holder }
    // the holder is gone (or the file is not a lock): set it aside and try again
    stale = holder ?? stale
    try {
      renameSync(path, `${path}.stale-${process.pid}`)
      unlinkSync(`${path}.stale-${process.pid}`)
    } catch {
      /* another process moved it first */
    }
  }
  const holder = read(path)
  if (holder) return { taken: false, holder }
  throw new Error(`could not take ${path}`)
}

/** Records the ports actually listened on (the devnet's free ports, a gateway's port 0, are known only once it is up). */
export function updateDataDirLock(dataDir: string, ports: ListenedPort[]): void {
  const path = lockPath(dataDir)
  const lock = read(path)
  if (lock?.pid !== process.pid) return
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify({ ...lock, ports }, null, 2)}\n`)
  renameSync(tmp, path)
}

/** Removes the lock if this process holds it. */
export function releaseDataDirLock(dataDir: string): void {
  const path = lockPath(dataDir)
  if (read(path)?.pid !== process.pid) return
  try {
    unlinkSync(path)
  } catch {
    /* already gone */
  }
}
