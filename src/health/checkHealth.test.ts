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
    const report = await checkHealth({ db: handle.db, modelServer: { check: async () => ({ status: 'ok', servers: [{ url: 'http://127.0.0.1:11434', status: 'up' }] }), servers: () => [] }, catalogue: writable })
    expect(report.status).toBe('ok')
    expect(Object.values(report.checks).map((c) => c.status)).toEqual(['ok', 'ok', 'ok'])
    for (const check of Object.values(report.checks)) expect(check.latency_ms).toBeGreaterThanOrEqual(0)
  })

  it('is degraded, naming what failed, when the model server is down', async () => {
    const report = await checkHealth({
      db: handle.db,
      modelServer: { check: async () => ({ status: 'down', detail: 'connect ECONNREFUSED 127.0.0.1:11434', servers: [{ url: 'http://127.0.0.1:11434', status: 'down' }] }), servers: () => [] },
      catalogue: writable,
    })
    expect(report.status).toBe('degraded')
    expect(report.checks.modelserver).toMatchObject({ status: 'down', detail: 'connect ECONNREFUSED 127.0.0.1:11434', servers: [{ status: 'down' }] })
    expect(report.checks.database.status).toBe('ok')
  })

  it('is degraded when one of several model servers is down (partial), listing each server', async () => {
    const servers = [
      { url: 'http://a:11434', status: 'up' },
      { url: 'http://b:11434', status: 'down' },
    ]
    const report = await checkHealth({ db: handle.db, modelServer: { check: async () => ({ status: 'partial', detail: 'http://b:11434: down', servers }), servers: () => [] }, catalogue: writable })
    expect(report.status).toBe('degraded')
    expect(report.checks.modelserver).toMatchObject({ status: 'partial', servers })
  })

  it('counts a dependency slower than the timeout as down', async () => {
    const report = await checkHealth({
      db: handle.db,
      modelServer: { check: () => new Promise(() => undefined), servers: () => [{ url: 'http://127.0.0.1:11434', status: 'up', models: null, in_flight: 0, last_error: null }] },
      catalogue: writable,
      timeoutMs: 50,
    })
    // still the documented shape: each server listed, down for this check, with why
    expect(report.checks.modelserver).toMatchObject({
      status: 'down',
      detail: 'timed out after 50 ms',
      servers: [{ url: 'http://127.0.0.1:11434', status: 'down', in_flight: 0, last_error: 'timed out after 50 ms' }],
    })
    expect(report.status).toBe('degraded')
  })
})

describe('checkHealth with a domain\'s checks', () => {
  it('adds them by name: fields merged, a throw is down, a non-ok status degrades; core results stay bare', async () => {
    const report = await checkHealth({
      db: { selectFrom: () => ({ select: () => ({ limit: () => ({ execute: async () => [{ event_id: 'e' }] }) }) }) } as never,
      modelServer: { check: async () => ({ status: 'ok', servers: [{ url: 'http://127.0.0.1:11434', status: 'up' }] }), servers: () => [] },
      catalogue: { checkWritable: async () => undefined },
      extra: {
        upstream: async () => undefined,
        credit: async () => ({ status: 'low', balance_winc: '0' }),
        algod: async () => {
          throw new Error('connect ECONNREFUSED')
        },
      },
    })
    expect(Object.keys(report.checks.database).sort()).toEqual(['latency_ms', 'status'])
    expect(Object.keys(report.checks.modelserver).sort()).toEqual(['latency_ms', 'servers', 'status'])
    expect(report.checks.upstream).toMatchObject({ status: 'ok' })
    expect(report.checks.credit).toMatchObject({ status: 'low', balance_winc: '0' })
    expect(report.checks.algod).toMatchObject({ status: 'down', detail: 'connect ECONNREFUSED' })
    expect(report.status).toBe('degraded')
  })
})
