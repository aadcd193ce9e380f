import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../config/loadConfig.js'
import { resolveInstanceId } from './resolveInstanceId.js'

const dir = mkdtempSync(join(tmpdir(), 'instance-id-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('resolveInstanceId', () => {
  it('keeps a generated identity across restarts (same data dir), and a configured one wins', () => {
    const first = resolveInstanceId(undefined, dir)
    expect(first).toMatch(/^[A-Za-z0-9.-]+-[0-9a-f]{12}$/)
    expect(resolveInstanceId(undefined, dir)).toBe(first)
    expect(readFileSync(join(dir, 'instance-id'), 'utf8').trim()).toBe(first)
    expect(resolveInstanceId('gw-a', dir)).toBe('gw-a')
    expect(resolveInstanceId(undefined, join(dir, 'other'))).not.toBe(first)
  })

  it('refuses an instance id or rate-limit store the gateway cannot use, naming the variable', () => {
    expect(() => loadConfig({ SERVICE_INSTANCE_ID: 'has space' })).toThrow(/SERVICE_INSTANCE_ID/)
    expect(() => loadConfig({ SERVICE_RATE_LIMIT__STORE: 'redis' })).toThrow(/SERVICE_RATE_LIMIT__STORE/)
    expect(loadConfig({ SERVICE_RATE_LIMIT__STORE: 'database', SERVICE_INSTANCE_ID: 'gw-1' })).toMatchObject({ rateLimit: { store: 'database' }, instance: { id: 'gw-1', leaseS: 20 } })
  })
})
