import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { checkHealth } from './checkHealth.js'

describe('checkHealth', () => {
  let handle: DatabaseHandle
  beforeAll(async () => {
    handle = await createDatabase({ url: ':memory:' })
  })
  afterAll(async () => handle.close())

  const writable = { checkWritable: async () => undefined }

  it('is ok when every dependency answers', async () => {
    const report = await checkHealth({ db: handle.db, modelServer: { version: async () => '0.12.6' }, catalogue: writable })
    expect(report.status).toBe('ok')
    expect(Object.values(report.checks).map((c) => c.status)).toEqual(['ok', 'ok', 'ok'])
    for (const check of Object.values(report.checks)) expect(check.latency_ms).toBeGreaterThanOrEqual(0)
  })

  it('is degraded, naming what failed, when the model server is down', async () => {
    const report = await checkHealth({
      db: handle.db,
      modelServer: { version: async () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:11434')) },
      catalogue: writable,
    })
    expect(report.status).toBe('degraded')
    expect(report.checks.modelserver).toMatchObject({ status: 'down', detail: 'connect ECONNREFUSED 127.0.0.1:11434' })
    expect(report.checks.database.status).toBe('ok')
  })

  it('counts a dependency slower than the timeout as down', async () => {
    const report = await checkHealth({
      db: handle.db,
      modelServer: { version: () => new Promise(() => undefined) },
      catalogue: writable,
      timeoutMs: 50,
    })
    expect(report.checks.modelserver).toMatchObject({ status: 'down', detail: 'timed out after 50 ms' })
    expect(report.status).toBe('degraded')
  })
})
