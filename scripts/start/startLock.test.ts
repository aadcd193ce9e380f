import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { lockPath, releaseStartLock, takeStartLock, updateStartLock, type StartLock } from './startLock.js'

const dirs: string[] = []
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'start-lock-'))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const ports = [{ port: 8000, service: 'the gateway', url: 'http://127.0.0.1:8000' }]
const other = (dir: string, pid: number): StartLock => ({ pid, startedAt: Date.now() - 60_000, dataDir: dir, ports: [{ port: 8545, service: 'devnet chain' }] })

describe('the npm start lock of a data directory', () => {
  it('is taken when free and records this process and its ports; released, it is gone', () => {
    const dir = dataDir()
    expect(takeStartLock(dir, ports)).toEqual({ taken: true })
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8'))).toMatchObject({ pid: process.pid, dataDir: dir, ports })
    updateStartLock(dir, [...ports, { port: 40001, service: 'devnet chain' }])
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as StartLock).ports).toHaveLength(2)
    releaseStartLock(dir)
    expect(existsSync(lockPath(dir))).toBe(false)
  })

  it('held by a running npm start: not taken, and the holder is who to name', () => {
    const dir = dataDir()
    const holder = other(dir, 4242)
    writeFileSync(lockPath(dir), JSON.stringify(holder))
    const result = takeStartLock(dir, ports, (pid) => pid === 4242)
    expect(result).toEqual({ taken: false, holder })
    // never touched by another process: not updated, not released
    updateStartLock(dir, [])
    releaseStartLock(dir)
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as StartLock).pid).toBe(4242)
  })

  it('left by an npm start that no longer runs (SIGKILL, crash): taken over, the stale holder reported', () => {
    const dir = dataDir()
    const stale = other(dir, 4242)
    writeFileSync(lockPath(dir), JSON.stringify(stale))
    const result = takeStartLock(dir, ports, () => false)
    expect(result).toEqual({ taken: true, stale })
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as StartLock).pid).toBe(process.pid)
    releaseStartLock(dir)
  })

  it('a file that is not a lock (empty, truncated) does not stop a start', () => {
    const dir = dataDir()
    writeFileSync(lockPath(dir), '{"pid": 12')
    expect(takeStartLock(dir, ports, () => true)).toEqual({ taken: true })
    releaseStartLock(dir)
  })
})
