import { describe, expect, it } from 'vitest'
import type { CatalogueEventInput } from '../catalogue/EventSink.js'
import type { TopUpConfig } from './config.js'
import { StorageUpstreamFailedError } from './errors.js'
import type { UpstreamClient } from './UpstreamClient.js'
import { UpstreamCredit } from './UpstreamCredit.js'

/** An upstream account in memory with the UpstreamClient methods the credit uses. */
function account(winc: bigint, { down = false } = {}) {
  const state = { winc, topUps: [] as string[], down }
  const upstream = {
    balance: async () => {
      if (state.down) throw new StorageUpstreamFailedError('storage upstream unreachable')
      return state.winc
    },
    priceOfBytes: async (n: bigint) => n * 1_000n,
    depositAddress: async () => '0x' + '9'.repeat(40),
    topUp: async (_address: string, _currency: string, tx: string) => {
      state.topUps.push(tx)
      state.winc += 5_000_000_000n
      return { creditedWinc: 5_000_000_000n }
    },
  } as unknown as UpstreamClient
  return { state, upstream }
}

const topUp: TopUpConfig = { key: `0x${'1'.repeat(64)}`, rpcUrl: 'http://x', currency: 'base-usdc', token: `0x${'2'.repeat(40)}`, amountAtomic: 1n, depositAddress: undefined }
const transfer = async () => ({ txHash: `0x${'3'.repeat(64)}` as const, from: '0x', to: '0x', amountAtomic: 1n })

describe('UpstreamCredit', () => {
  it('refuses an upload the balance cannot pay, lets free-size items and an unreachable upstream through', async () => {
    const { upstream, state } = account(100n)
    const credit = new UpstreamCredit({ upstream, address: async () => 'A', lowWinc: 10n })
    await expect(credit.assertCanCover(1_000_000n)).rejects.toMatchObject({ code: 'upstream_credit_insufficient' })
    await expect(credit.assertCanCover(1_000n)).resolves.toBeUndefined() // ≤ 100 KiB data item: free upstream
    state.down = true
    await expect(credit.assertCanCover(1_000_000n)).resolves.toBeUndefined()
  })

  it('below the threshold: one credit_low event per drop, a top-up, the event of the top-up', async () => {
    const { upstream, state } = account(0n)
    const events: CatalogueEventInput[] = []
    const credit = new UpstreamCredit({ upstream, address: async () => 'A', lowWinc: 1_000n, topUp, transfer, events: { emit: async (e) => (events.push(e), {} as never) } })
    const after = await credit.maintain()
    expect(after).toMatchObject({ low: false, balanceWinc: 5_000_000_000n })
    expect(state.topUps).toEqual([`0x${'3'.repeat(64)}`])
    expect(events.map((e) => e.kind)).toEqual(['storage.upstream.credit_low', 'storage.upstream.topped_up'])
    // without a top-up key: reported once, not at every read
    const low = account(0n)
    const quiet: CatalogueEventInput[] = []
    const reportOnly = new UpstreamCredit({ upstream: low.upstream, address: async () => 'A', lowWinc: 1_000n, events: { emit: async (e) => (quiet.push(e), {} as never) } })
    await reportOnly.maintain()
    await reportOnly.maintain()
    expect(quiet.map((e) => e.kind)).toEqual(['storage.upstream.credit_low'])
  })
})
