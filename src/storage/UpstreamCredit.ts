import type { Logger } from 'pino'
import type { EventSink } from '../catalogue/EventSink.js'
import type { TopUpConfig } from './config.js'
import { StorageUpstreamFailedError, UpstreamCreditInsufficientError } from './errors.js'
import { transferTopUp, type TopUpTransfer } from './topUpOnChain.js'
import type { UpstreamClient } from './UpstreamClient.js'

/** Turbo uploads data items of at most this many bytes for free (seed §8). */
export const FREE_ITEM_BYTES = 102_400n
/** Bytes an ANS-104 data item adds to the file: signature, owner, tags (generous, so the estimate never falls short). */
export const DATA_ITEM_OVERHEAD_BYTES = 4_096n

export type CreditState = { balanceWinc: bigint; lowWinc: bigint; low: boolean; checkedAt: number }

export type UpstreamCreditOptions = {
  upstream: UpstreamClient
  /** The service's upstream account (its Arweave address). */
  address: () => Promise<string>
  lowWinc: bigint
  topUp?: TopUpConfig | undefined
  events?: EventSink | undefined
  logger?: Logger | undefined
  /** Told every balance read (the metric). */
  onBalance?: ((winc: bigint) => void) | undefined
  /** Told every top-up (the metric). */
  onTopUp?: ((transfer: TopUpTransfer, creditedWinc: bigint | undefined) => void) | undefined
  /** Tests move the on-chain transfer. */
  transfer?: typeof transferTopUp
}

/**
 * The prepaid upstream account (seed 4.7): reads the balance, says whether an upload can be paid from it,
 * and keeps it above `lowWinc` — when it falls below, one `storage.upstream.credit_low` event (per drop, not
 * per read) and, with a top-up key, a top-up from the service's own funds: a USDC transfer to the upstream's
 * deposit address, then `POST /v1/top-up/wallet/{address}/{currency}/{tx}`. One top-up at a time.
 */
export class UpstreamCredit {
  readonly lowWinc: bigint
  readonly topUpConfigured: boolean
  readonly #o: UpstreamCreditOptions
  #last: CreditState | undefined
  #lowReported = false
  #maintaining: Promise<CreditState> | undefined

  constructor(options: UpstreamCreditOptions) {
    this.#o = options
    this.lowWinc = options.lowWinc
    this.topUpConfigured = options.topUp !== undefined
  }

  get last(): CreditState | undefined {
    return this.#last
  }

  /** `GET /v1/balance/{address}` (404 = 0). */
  async read(): Promise<CreditState> {
    const balanceWinc = await this.#o.upstream.balance(await this.#o.address())
    this.#o.onBalance?.(balanceWinc)
    this.#last = { balanceWinc, lowWinc: this.lowWinc, low: balanceWinc < this.lowWinc, checkedAt: Date.now() }
    return this.#last
  }

  /** Winc the upstream will charge for a file of `sizeBytes` (0 when the data item fits the free size). */
  async costOf(sizeBytes: bigint): Promise<bigint> {
    const itemBytes = sizeBytes + DATA_ITEM_OVERHEAD_BYTES
    if (itemBytes <= FREE_ITEM_BYTES) return 0n
    return this.#o.upstream.priceOfBytes(itemBytes)
  }

  /**
   * Throws 503 `upstream_credit_insufficient` when the balance is known not to cover `sizeBytes` — called
   * before any money is taken — and starts a top-up in the background. When the upstream cannot be asked,
   * the upload goes ahead (and is queued if the upstream is still down after payment).
   */
  async assertCanCover(sizeBytes: bigint): Promise<void> {
    let cost: bigint
    let state: CreditState
    try {
      cost = await this.costOf(sizeBytes)
      if (cost === 0n) return
      state = await this.read()
    } catch (error) {
      // An unreachable upstream is not a known shortfall: the paid upload is queued and retried (seed 4.6).
      if (error instanceof StorageUpstreamFailedError) return
      throw error
    }
    if (state.balanceWinc >= cost) return
    void this.maintain().catch(() => undefined)
    throw new UpstreamCreditInsufficientError(cost, state.balanceWinc, this.topUpConfigured)
  }

  /** Reads the balance; below `lowWinc`: reports it once and tops up (when configured). Never runs twice at once. */
  maintain(): Promise<CreditState> {
    this.#maintaining ??= this.#maintain().finally(() => {
      this.#maintaining = undefined
    })
    return this.#maintaining
  }

  async #maintain(): Promise<CreditState> {
    let state = await this.read()
    if (!state.low) {
      this.#lowReported = false
      return state
    }
    if (!this.#lowReported) {
      this.#lowReported = true
      this.#o.logger?.warn({ balance_winc: state.balanceWinc.toString(), low_winc: this.lowWinc.toString() }, 'upstream credit low')
      await this.#o.events
        ?.emit({
          kind: 'storage.upstream.credit_low',
          severity: 'warning',
          payload: { address: await this.#o.address(), balance_winc: state.balanceWinc.toString(), low_winc: this.lowWinc.toString(), top_up: this.topUpConfigured },
        })
        .catch((error: unknown) => this.#o.logger?.error({ err: error }, 'storage.upstream.credit_low event could not be written'))
    }
    const topUp = this.#o.topUp
    if (!topUp) return state
    const deposit = topUp.depositAddress ?? ((await this.#o.upstream.depositAddress()) as `0x${string}` | undefined)
    if (!deposit) throw new Error('the upstream names no deposit address (set SERVICE_STORAGE__TOPUP_DEPOSIT_ADDRESS)')
    const transfer = await (this.#o.transfer ?? transferTopUp)(topUp, deposit)
    const { creditedWinc } = await this.#o.upstream.topUp(await this.#o.address(), topUp.currency, transfer.txHash)
    this.#o.onTopUp?.(transfer, creditedWinc)
    this.#o.logger?.info({ tx_hash: transfer.txHash, amount_atomic: transfer.amountAtomic.toString(), credited_winc: creditedWinc?.toString() }, 'upstream credit topped up')
    await this.#o.events
      ?.emit({
        kind: 'storage.upstream.topped_up',
        payload: {
          address: await this.#o.address(),
          currency: topUp.currency,
          tx_hash: transfer.txHash,
          amount_atomic: transfer.amountAtomic.toString(),
          credited_winc: creditedWinc?.toString() ?? null,
        },
      })
      .catch((error: unknown) => this.#o.logger?.error({ err: error }, 'storage.upstream.topped_up event could not be written'))
    state = await this.read()
    if (!state.low) this.#lowReported = false
    return state
  }
}
