import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { lockPath, releaseDataDirLock, takeDataDirLock, updateDataDirLock, type DataDirLock } from './dataDirLock.js'

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
const other = (dir: string, pid: number): DataDirLock => ({ pid, startedAt: Date.now() - 60_000, dataDir: dir, ports: [{ port: 8545, service: 'devnet chain' }] })

describe('the lock of a data directory (npm start, a gateway on its own)', () => {
  it('is taken when free and records this process and its ports; released, it is gone', () => {
    const dir = dataDir()
    expect(takeDataDirLock(dir, 'npm start', ports)).toEqual({ taken: true })
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8'))).toMatchObject({ pid: process.pid, dataDir: dir, ports })
    updateDataDirLock(dir, [...ports, { port: 40001, service: 'devnet chain' }])
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as DataDirLock).ports).toHaveLength(2)
    releaseDataDirLock(dir)
    expect(existsSync(lockPath(dir))).toBe(false)
  })

  it('held by a running npm start: not taken, and the holder is who to name', () => {
    const dir = dataDir()
    const holder = other(dir, 4242)
    writeFileSync(lockPath(dir), JSON.stringify(holder))
    const result = takeDataDirLock(dir, 'npm start', ports, (pid) => pid === 4242)
    expect(result).toEqual({ taken: false, holder })
    // never touched by another process: not updated, not released
    updateDataDirLock(dir, [])
    releaseDataDirLock(dir)
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as DataDirLock).pid).toBe(4242)
  })

  it('left by an npm start that no longer runs (SIGKILL, crash): taken over, the stale holder reported', () => {
    const dir = dataDir()
    const stale = other(dir, 4242)
    writeFileSync(lockPath(dir), JSON.stringify(stale))
    const result = takeDataDirLock(dir, 'npm start', ports, () => false)
    expect(result).toEqual({ taken: true, stale })
    expect((JSON.parse(readFileSync(lockPath(dir), 'utf8')) as DataDirLock).pid).toBe(process.pid)
    releaseDataDirLock(dir)
  })

  it("naming this very pid, left by a former process (a container's gateway is pid 1 at every start): taken over", () => {
    const dir = dataDir()
    const former = { ...other(dir, process.pid), program: 'gateway' as const }
    writeFileSync(lockPath(dir), JSON.stringify(former))
    expect(takeDataDirLock(dir, 'gateway', ports, () => true)).toEqual({ taken: true, stale: former })
    releaseDataDirLock(dir)
  })

  it('a file that is not a lock (empty, truncated) does not stop a start', () => {
    const dir = dataDir()
    writeFileSync(lockPath(dir), '{"pid": 12')
    expect(takeDataDirLock(dir, 'npm start', ports, () => true)).toEqual({ taken: true })
    releaseDataDirLock(dir)
  })
})
