/**
 * `<data dir>/npm-start.json`: the `npm start` running on this data directory — its pid, since when, and what
 * it serves on which port — so a second `npm start` on the same directory says so at once instead of
 * starting a second devnet over the first one's files. Taken with an exclusive create; a lock whose pid no
 * longer runs `npm start` (a SIGKILL, a crash) is taken over. Removed when its `npm start` exits.
 */
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRunningStart } from './processes.js'

export type ListenedPort = { port: number; service: string; url?: string }

export type StartLock = { pid: number; startedAt: number; dataDir: string; ports: ListenedPort[] }

export type LockResult = { taken: true; stale?: StartLock } | { taken: false; holder: StartLock }

export const lockPath = (dataDir: string) => join(dataDir, 'npm-start.json')

function read(path: string): StartLock | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StartLock
  } catch {
    return undefined
  }
}

/** Takes the lock for this process, or says who holds it. */
export function takeStartLock(dataDir: string, ports: ListenedPort[], isRunning: (pid: number) => boolean = isRunningStart): LockResult {
  mkdirSync(dataDir, { recursive: true })
  const path = lockPath(dataDir)
  const mine: StartLock = { pid: process.pid, startedAt: Date.now(), dataDir, ports }
  let stale: StartLock | undefined
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(mine, null, 2)}\n`, { flag: 'wx' })
      process.once('exit', () => releaseStartLock(dataDir))
      return stale ? { taken: true, stale } : { taken: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = read(path)
    if (holder && isRunning(holder.pid)) return { taken: false, holder }
    // the holder is gone (or the file is not one of ours): set it aside and try again
    stale = holder ?? stale
    try {
      renameSync(path, `${path}.stale-${process.pid}`)
      unlinkSync(`${path}.stale-${process.pid}`)
    } catch {
      /* another start moved it first */
    }
  }
  const holder = read(path)
  if (holder) return { taken: false, holder }
  throw new Error(`could not take ${path}`)
}

/** Records the ports actually listened on (the devnet's free ports are known only once it is up). */
export function updateStartLock(dataDir: string, ports: ListenedPort[]): void {
  const path = lockPath(dataDir)
  const lock = read(path)
  if (lock?.pid !== process.pid) return
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify({ ...lock, ports }, null, 2)}\n`)
  renameSync(tmp, path)
}

/** Removes the lock if this process holds it. */
export function releaseStartLock(dataDir: string): void {
  const path = lockPath(dataDir)
  if (read(path)?.pid !== process.pid) return
  try {
    unlinkSync(path)
  } catch {
    /* already gone */
  }
}
