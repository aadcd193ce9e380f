import type { BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'
import type { Logger } from '../../shared/logger.js'
import type { BatchNetwork } from './batchRequirement.js'
import type { BatchSettlementConfig } from './config.js'
import { JobLease } from './JobLease.js'
import { recordBatchTx } from './recordBatchTx.js'

/** The longest a claim job may hold its lease before another instance may take over (a job that died). */
const LEASE_S = 300

export type BatchClaimReport = {
  network: string
  /** `ran`: this instance ran the job; `busy`: another instance holds it right now (it claims the same vouchers). */
  outcome: 'ran' | 'busy'
  /** One claim transaction per batch of up to 100 vouchers (channels). */
  claims: { vouchers: number; transaction: string }[]
  /** The sweep of what was claimed to the receiver, when there was any. */
  settle?: { transaction: string }
  refunds: { channel: string; transaction: string }[]
}

type ClaimChain = { on: BatchNetwork; manager: BatchSettlementChannelManager }

export type BatchClaimsOptions = {
  db: Kysely<Database>
  chains: ClaimChain[]
  holder: string
  config: Pick<BatchSettlementConfig, 'claimIntervalS' | 'refundIdleS'>
  logger?: Logger
  now: () => number
}

/**
 * Claims the vouchers of the gateway's channels, on a schedule (`SERVICE_X402__BATCH__CLAIM_INTERVAL_S`) and on
 * demand (`POST /x402/batch-settlement/claims`): per chain, every channel charged above what was claimed goes into
 * one `claimWithSignature` transaction (the latest voucher of each, up to 100 channels a transaction), then one
 * `settle` moves the claimed funds to the pay-to address; channels idle for `SERVICE_X402__BATCH__REFUND_IDLE_S`
 * get their unclaimed deposit back. Each chain's job runs under a lease in the database, so two instances never
 * submit the same vouchers (the escrow would make the second claim a no-op, but it would still cost gas).
 */
export class BatchClaims {
  readonly #o: BatchClaimsOptions
  readonly #lease: JobLease
  #timer: NodeJS.Timeout | undefined
  #running: Promise<unknown> | undefined

  constructor(o: BatchClaimsOptions) {
    this.#o = o
    this.#lease = new JobLease(o.db, o.now)
  }

  /** Claims, settles and (when configured) refunds idle channels on every chain now. */
  async run(): Promise<BatchClaimReport[]> {
    const reports: BatchClaimReport[] = []
    for (const chain of this.#o.chains) reports.push(await this.#runChain(chain))
    return reports
  }

  async #runChain({ on, manager }: ClaimChain): Promise<BatchClaimReport> {
    const network = on.network
    const ran = await this.#lease.run(`claim:${network}`, this.#o.holder, LEASE_S, async () => {
      const report: BatchClaimReport = { network, outcome: 'ran', claims: [], refunds: [] }
      report.claims = await manager.claim()
      for (const c of report.claims) await this.#record({ kind: 'claim', network, txHash: c.transaction, vouchers: c.vouchers, amount: '' })
      // Also sweeps what an earlier run claimed and could not settle: nothing to settle is not a failure.
      const settle = await manager.settle().catch((error: unknown) => {
        if (String(error).includes('nothing_to_settle')) return undefined
        throw error
      })
      if (settle) {
        report.settle = settle
        await this.#record({ kind: 'settle', network, txHash: settle.transaction, vouchers: 0, amount: '' })
      }
      if (this.#o.config.refundIdleS > 0) {
        report.refunds = await manager.refundIdleChannels({ idleSecs: this.#o.config.refundIdleS })
        for (const r of report.refunds) await this.#record({ kind: 'refund', network, txHash: r.transaction, vouchers: 0, amount: '', channelId: r.channel })
      }
      return report
    })
    return ran ?? { network, outcome: 'busy', claims: [], refunds: [] }
  }

  #record(tx: Parameters<typeof recordBatchTx>[1]) {
    return recordBatchTx(this.#o.db, tx, this.#o.now())
  }

  /** Starts the schedule (none when the interval is 0). A run never overlaps the previous one. */
  start(): void {
    const intervalS = this.#o.config.claimIntervalS
    if (intervalS <= 0 || this.#timer) return
    this.#timer = setInterval(() => {
      if (this.#running) return
      this.#running = this.run()
        .catch((error: unknown) => this.#o.logger?.error({ err: error }, 'batch-settlement claim job failed; the next run tries again'))
        .finally(() => {
          this.#running = undefined
        })
    }, intervalS * 1000)
    this.#timer.unref()
  }

  /** Stops the schedule and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }
}
