import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { Catalogue, summarizeEvent } from './Catalogue.js'

describe.each(dialects)('catalogue on %s', (dialect) => {
  let handle: TestDatabase
  let dir: string
  let catalogue: Catalogue
  let nowMs = 1_795_000_000_000
  beforeAll(async () => {
    handle = await createTestDatabase(dialect)
    dir = mkdtempSync(join(tmpdir(), 'gw-cat-'))
    catalogue = new Catalogue({ db: handle.db, logPath: join(dir, 'logs', 'catalogue.jsonl'), now: () => nowMs })
  })
  afterAll(async () => {
    await handle?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('appends each event as one JSON line and indexes it', async () => {
    const event = await catalogue.emit({ kind: 'auth.gate.redirect', payload: { path: '/journal', reason: 'no_session', ip_hash: 'sha256:ab' } })
    expect(event).toMatchObject({ kind: 'auth.gate.redirect', actor: 'service.gateway', at: 1_795_000_000, severity: 'info' })
    expect(event.source_log).toBe(join(dir, 'logs', 'catalogue.jsonl'))
    const lines = readFileSync(event.source_log, 'utf8').trim().split('\n')
    expect(JSON.parse(lines.at(-1)!)).toEqual(event)
    expect(await catalogue.recent({ kind: 'auth.gate.redirect' })).toEqual([event])
  })

  it('keeps lines whole under concurrent emits and lists newest first, filtered by kind', async () => {
    const emitted = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        nowMs += 1000
        return catalogue.emit({ kind: i % 2 ? 'a.odd' : 'a.even', payload: { i, text: 'x'.repeat(5000) } })
      }),
    )
    const lines = readFileSync(emitted[0]!.source_log, 'utf8').trim().split('\n')
    expect(lines).toHaveLength(51)
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    const odd = await catalogue.recent({ kind: 'a.odd', limit: 3 })
    expect(odd.map((e) => e.payload.i)).toEqual([49, 47, 45])
    const all = await catalogue.recent({ limit: 500 })
    expect(all).toHaveLength(51)
    const ids = all.map((e) => e.event_id)
    expect(new Set(ids).size).toBe(51)
  })

  it('writes a burst of events in a few appends and transactions, not one each, and loses none', async () => {
    let commits = 0
    const burstDir = mkdtempSync(join(tmpdir(), 'gw-cat-burst-'))
    const counted = new Catalogue({
      db: handle.db,
      logPath: join(burstDir, 'catalogue.jsonl'),
      now: () => nowMs,
      commit: (write) => {
        commits++
        return write(handle.db)
      },
    })
    try {
      const emitted = await Promise.all(Array.from({ length: 40 }, (_, i) => counted.emit({ kind: 'burst.event', payload: { i } })))
      const lines = readFileSync(join(burstDir, 'catalogue.jsonl'), 'utf8').trim().split('\n')
      expect(lines.map((line) => JSON.parse(line).payload.i)).toEqual(emitted.map((_, i) => i)) // every one, in order
      expect(await catalogue.recent({ kind: 'burst.event', limit: 100 })).toHaveLength(40)
      expect(commits).toBeGreaterThan(0)
      expect(commits).toBeLessThanOrEqual(2) // the first event's round, then everything that came meanwhile
    } finally {
      rmSync(burstDir, { recursive: true, force: true })
    }
  })

  it('summarises events for humans', () => {
    expect(
      summarizeEvent({ event_id: 'e', kind: 'auth.gate.redirect', actor: 'service.gateway', at: 0, severity: 'info', payload: { path: '/journal', reason: 'no_session', ip_hash: 'sha256:0123456789abcdef0123' }, source_log: '' }),
    ).toMatch(/\/journal/)
  })

  it('re-indexes events the database lost from the log', async () => {
    const before = await catalogue.recent({ limit: 500 })
    await handle.db.deleteFrom('catalogue_events').where('kind', '=', 'a.odd').execute()
    expect(await catalogue.reindex()).toBe(25)
    expect(await catalogue.recent({ limit: 500 })).toEqual(before)
    expect(await catalogue.reindex()).toBe(0)
  })

  it('reports whether the log is writable', async () => {
    await expect(catalogue.checkWritable()).resolves.toBeUndefined()
  })
})
