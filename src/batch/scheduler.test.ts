import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { readBatchConfig, resolveReceiptBatchesAddress } from './config.js'
import { BatchConfigError } from './errors.js'
import { msUntilDailyAt, startBatchScheduler } from './scheduler.js'

const at = (iso: string) => Date.parse(iso)

describe('daily schedule', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('computes the delay to the next HH:MM UTC', () => {
    expect(msUntilDailyAt('00:10', at('2026-01-01T00:00:00Z'))).toBe(10 * 60_000)
    expect(msUntilDailyAt('00:10', at('2026-01-01T00:10:00Z'))).toBe(86_400_000)
    expect(msUntilDailyAt('00:10', at('2026-01-01T23:00:00Z'))).toBe(70 * 60_000)
    expect(msUntilDailyAt('23:59', at('2026-02-28T23:59:30Z'))).toBe(86_400_000 - 30_000)
  })

  it('runs once a day, never two runs at once, and keeps going after a failure', async () => {
    vi.useFakeTimers()
    vi.setSystemTime(at('2026-01-01T00:00:00Z'))
    let calls = 0
    const errors: unknown[] = []
    let release: () => void = () => {}
    const s = startBatchScheduler({
      dailyAt: '00:10',
      run: () => {
        calls++
        if (calls === 1) return Promise.reject(new Error('boom'))
        return new Promise<void>((r) => (release = r)) // second run hangs until released
      },
      onError: (e) => errors.push(e),
    })
    expect(s.nextRunAt()).toBe(at('2026-01-01T00:10:00Z'))
    await vi.advanceTimersByTimeAsync(10 * 60_000 - 1)
    expect(calls).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(calls).toBe(1)
    expect(errors).toHaveLength(1)
    expect(s.nextRunAt()).toBe(at('2026-01-02T00:10:00Z'))
    await vi.advanceTimersByTimeAsync(86_400_000)
    expect(calls).toBe(2)
    await vi.advanceTimersByTimeAsync(86_400_000) // still running: skipped
    expect(calls).toBe(2)
    release()
    await vi.advanceTimersByTimeAsync(86_400_000)
    expect(calls).toBe(3)
    s.stop()
    await vi.advanceTimersByTimeAsync(3 * 86_400_000)
    expect(calls).toBe(3)
  })
})

describe('batch configuration', () => {
  const key = `0x${'11'.repeat(32)}`
  it('defaults, and enables the schedule only with an attestor key', () => {
    const c = readBatchConfig({ SERVICE_DATA_DIR: '/tmp/x' })
    expect(c).toMatchObject({ enabled: false, dailyAt: '00:10', rpcUrl: 'http://127.0.0.1:8545', maxLeaves: 10_000, dataDir: '/tmp/x' })
    expect(readBatchConfig({ SERVICE_BATCH__ATTESTOR_KEY: key }).enabled).toBe(true)
    expect(readBatchConfig({ SERVICE_BATCH__ATTESTOR_KEY: key, SERVICE_BATCH__ENABLED: '0' }).enabled).toBe(false)
  })

  it('rejects bad values naming the variable', () => {
    expect(() => readBatchConfig({ SERVICE_BATCH__DAILY_AT: '24:00' })).toThrow(ConfigError)
    expect(() => readBatchConfig({ SERVICE_BATCH__ATTESTOR_KEY: '0x1234' })).toThrow(/SERVICE_BATCH__ATTESTOR_KEY/)
    expect(() => readBatchConfig({ SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS: 'nope' })).toThrow(/RECEIPT_BATCHES_ADDRESS/)
  })

  it('takes the contract from the deployment file when not configured', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'batch-config-'))
    const c = readBatchConfig({ SERVICE_DATA_DIR: dir })
    expect(() => resolveReceiptBatchesAddress(c, 8453)).toThrow(BatchConfigError)
    writeFileSync(join(dir, 'contracts-8453.json'), JSON.stringify({ receiptBatches: '0x5fc8d32690cc91d4c39d9d3abcbd16989f875707' }))
    expect(resolveReceiptBatchesAddress(c, 8453)).toBe('0x5FC8d32690cc91D4c39d9d3abcBD16989F875707')
    const configured = readBatchConfig({ SERVICE_DATA_DIR: dir, SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS: '0x00000000000000000000000000000000000000aa' })
    expect(resolveReceiptBatchesAddress(configured, 8453)).toBe('0x00000000000000000000000000000000000000AA')
  })
})
