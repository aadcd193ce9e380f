import type { BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'
import type { Logger } from '../../shared/logger.js'
import type { BatchNetwork } from './batchRequirement.js'
import type { BatchSettlementConfig } from './config.js'
import { JobLease } from './JobLease.js'
import { recordBatchTx } from './recordBatchTx.js'

/** Nothing to sweep is not a failure (another instance swept it). */
function nothingToSettle(error: unknown): undefined {
  if (String(error).includes('nothing_to_settle')) return undefined
  throw error
}

/** The longest a claim job may hold its lease before another instance may take over (a job that died). */
const LEASE_S = 300

export type BatchClaimReport = {
  network: string
  /**
   * `ran`: this instance ran the job; `busy`: another instance holds it right now (it claims the same vouchers);
   * `failed`: the facilitator or the chain refused (`error`); what was not claimed is claimed by the next run.
   */
  outcome: 'ran' | 'busy' | 'failed'
  error?: string
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
    for (const chain of this.#o.chains) {
      try {
        reports.push(await this.#runChain(chain))
      } catch (error) {
        this.#o.logger?.error({ err: error, network: chain.on.network }, 'batch-settlement claim job failed on this chain; the next run tries again')
        reports.push({ network: chain.on.network, outcome: 'failed', error: error instanceof Error ? error.message : String(error), claims: [], refunds: [] })
      }
    }
    return reports
  }

  async #runChain({ on, manager }: ClaimChain): Promise<BatchClaimReport> {
    const network = on.network
    const ran = await this.#lease.run(`claim:${network}`, this.#o.holder, LEASE_S, async () => {
      const report: BatchClaimReport = { network, outcome: 'ran', claims: [], refunds: [] }
      report.claims = await manager.claim()
      for (const c of report.claims) await this.#record({ kind: 'claim', network, txHash: c.transaction, vouchers: c.vouchers, amount: '' })
      // Sweeps what this run claimed, or what an earlier run claimed and could not sweep.
      const settle = report.claims.length > 0 || (await this.#unswept(network)) ? await manager.settle().catch(nothingToSettle) : undefined
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

  /** An earlier claim on `network` came after the last sweep (that run failed before it swept). */
  async #unswept(network: string): Promise<boolean> {
    const last = await this.#o.db
      .selectFrom('batch_settlement_txs')
      .select('kind')
      .where('network', '=', network)
      .where('kind', 'in', ['claim', 'settle'])
      .orderBy('created_at', 'desc')
      .orderBy('tx_id', 'desc')
      .limit(1)
      .executeTakeFirst()
    return last?.kind === 'claim'
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
