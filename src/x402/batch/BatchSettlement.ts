import { type FacilitatorClient, x402ResourceServer } from '@x402/core/server'
import type { PaymentPayload as CorePaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types'
import { type BatchSettlementChannelManager, BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server'
import type { Kysely } from 'kysely'
import { privateKeyToAccount } from 'viem/accounts'
import type { Database } from '../../db/Database.js'
import { BaseError } from '../../shared/errors/BaseError.js'
import type { Logger } from '../../shared/logger.js'
import { InvalidPaymentError, PaymentHeaderInvalidError, SettlementPendingError } from '../errors.js'
import { isSettlementPending } from '../settleWithPendingRetry.js'
import type { DecodedPaymentHeader } from '../headers.js'
import type { RailOffer } from '../PaymentRail.js'
import { InvalidPaymentReasons } from '../reasons.js'
import type { PaymentRequirement } from '../requirements.js'
import { type BatchNetwork, type BatchPayment, batchRequirement, type BatchTerms, checkBatchPayment, coreRequirement, CUMULATIVE_MISMATCH } from './batchRequirement.js'
import { BatchClaims } from './BatchClaims.js'
import type { BatchSettlementConfig } from './config.js'
import { chargeInterrupted, type InterruptedCharge, type InterruptedVoucher } from './chargeInterrupted.js'
import { recordBatchTx } from './recordBatchTx.js'
import { SqlChannelStorage } from './SqlChannelStorage.js'

export type BatchSettlementOptions = {
  db: Kysely<Database>
  config: BatchSettlementConfig
  payTo: string
  networks: BatchNetwork[]
  facilitator: FacilitatorClient
  /** Who runs the claim jobs (the instance id): one holder at a time among the instances of one database. */
  holder: string
  logger?: Logger
  now?: () => number
}

/** The scheme's view of one corrective 402: the server's channel state and the latest voucher it holds. */
export type BatchCorrection = { channelState: Record<string, unknown>; voucherState: Record<string, unknown> }

/** A 402 whose `accepts` must carry the channel's state so the payer's client can resynchronise its running total. */
export class BatchCumulativeMismatchError extends InvalidPaymentError {
  override name = 'BatchCumulativeMismatchError'
  constructor(
    message: string,
    readonly network: string,
    readonly correction: BatchCorrection | undefined,
  ) {
    super(CUMULATIVE_MISMATCH, message)
  }
}

/** 503: the gateway does not offer `batch-settlement` (no receiver-authorizer key, or no price to charge). */
export class BatchSettlementNotOfferedError extends BaseError<'batch_settlement_not_offered'> {
  override name = 'BatchSettlementNotOfferedError'
  constructor() {
    super('batch_settlement_not_offered', 'x402 batch-settlement is not offered by this gateway')
  }
}

/** What a verified voucher or deposit settles to: the scheme's SettleResponse (its `extra` carries the charge and the channel). */
export type BatchSettled = SettleResponse & { success: true }

/** A verified payment of one call: settle it for what the call cost, or cancel it (the call produced nothing). */
export type BatchHold = BatchPayment & {
  requirement: PaymentRequirement
  settle(chargeAtomic: bigint): Promise<BatchSettled>
  cancel(): Promise<void>
}

type Chain = { on: BatchNetwork; storage: SqlChannelStorage; scheme: BatchSettlementEvmScheme; manager: BatchSettlementChannelManager }

/**
 * x402 `batch-settlement` for the gateway (the EVM binding of coinbase/x402's scheme), built on @x402/evm's own
 * server scheme and channel manager: a payer deposits once into x402's escrow, then signs a voucher per call
 * whose running total grows by what the calls cost; the gateway claims the latest voucher of many channels in one
 * transaction, sweeps the claimed funds to its pay-to address, and gives unclaimed deposits back.
 *
 * The gateway's part: the requirement (`batchRequirement`), the local checks of a payload's channel terms, the
 * channels kept in the database (`SqlChannelStorage`: every instance sees the same running totals, and a channel
 * serves one call at a time across instances), its own receiver-authorizer key (so no facilitator can claim or
 * refund its channels), and the claim jobs (`BatchClaims`). The scheme's part: the running-total rule (a voucher
 * must be exactly the charged total + the requirement's amount — a replayed or lower voucher is refused with the
 * channel's state, the corrective 402), the voucher signature and on-chain balance checks (locally while the
 * mirrored chain state is fresh, else through the facilitator), and committing a charge never above what the
 * payer signed.
 */
export class BatchSettlement {
  readonly receiverAuthorizer: `0x${string}`
  readonly terms: BatchTerms
  readonly claims: BatchClaims
  readonly #server: x402ResourceServer
  readonly #chains: Map<string, Chain>
  readonly #db: Kysely<Database>
  readonly #now: () => number

  /** Undefined when the scheme is not configured (no receiver-authorizer key, no EVM pay-to address, no chain). */
  static create(o: BatchSettlementOptions): BatchSettlement | undefined {
    if (!o.config.authorizerKey || !/^0x[0-9a-fA-F]{40}$/.test(o.payTo) || o.networks.length === 0) return undefined
    return new BatchSettlement(o, o.config.authorizerKey)
  }

  private constructor(o: BatchSettlementOptions, key: `0x${string}`) {
    const authorizer = privateKeyToAccount(key)
    this.receiverAuthorizer = authorizer.address
    this.terms = { payTo: o.payTo as `0x${string}`, receiverAuthorizer: authorizer.address, withdrawDelayS: o.config.withdrawDelayS, minDepositCalls: o.config.minDepositCalls }
    this.#db = o.db
    this.#now = o.now ?? (() => Math.floor(Date.now() / 1000))
    this.#server = new x402ResourceServer(o.facilitator)
    this.#chains = new Map()
    const signer = { address: authorizer.address, signTypedData: (args: Parameters<typeof authorizer.signTypedData>[0]) => authorizer.signTypedData(args) }
    for (const on of o.networks) {
      const storage = new SqlChannelStorage(o.db, on.network, this.#now)
      const scheme = new BatchSettlementEvmScheme(this.terms.payTo, { storage, receiverAuthorizerSigner: signer as never, withdrawDelay: o.config.withdrawDelayS })
      this.#server.register(on.network, scheme)
      this.#chains.set(on.network, { on, storage, scheme, manager: scheme.createChannelManager(o.facilitator, on.network, on.asset) })
    }
    this.claims = new BatchClaims({ db: o.db, chains: [...this.#chains.values()], holder: o.holder, config: o.config, logger: o.logger, now: this.#now })
  }

  get networks(): string[] {
    return [...this.#chains.keys()]
  }

  /** The requirement of `offer` on each chain, in the order configured. */
  requirements(offer: RailOffer): PaymentRequirement[] {
    return [...this.#chains.values()].map((c) => batchRequirement(offer, c.on, this.terms))
  }

  requirement(network: string, offer: RailOffer): PaymentRequirement | undefined {
    const chain = this.#chains.get(network)
    return chain ? batchRequirement(offer, chain.on, this.terms) : undefined
  }

  /**
   * Commits the charge of a call whose instance died mid-stream (see `chargeInterrupted`). A chain this instance
   * does not serve throws: the call is left to a replica that does (its take lapses after the lease).
   */
  async chargeInterrupted(network: string, voucher: InterruptedVoucher): Promise<InterruptedCharge> {
    const chain = this.#chains.get(network)
    if (!chain) throw new Error(`batch-settlement is not configured on ${network} here`)
    return chargeInterrupted(chain.storage, voucher)
  }

  /** The channel the gateway holds, as stored (undefined when it holds none). */
  async channel(network: string, channelId: string) {
    return this.#chains.get(network)?.storage.get(channelId)
  }

  /**
   * Verifies the payment of one call (a deposit with its first voucher, or a voucher) against `requirement` and
   * reserves its channel for this call. 400 malformed, 402 refused (`BatchCumulativeMismatchError` when the
   * running total is not the server's: its correction goes into the 402), 502 facilitator unreachable.
   */
  async hold(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement): Promise<BatchHold> {
    const payment = checkBatchPayment(decoded, requirement)
    if (payment.kind === 'refund') throw new PaymentHeaderInvalidError('a batch-settlement refund is asked at GET /x402/batch-settlement/refund, not with a paid call')
    const { payload, core } = await this.#verify(decoded, requirement, payment)
    const server = this.#server
    return {
      ...payment,
      requirement,
      settle: async (chargeAtomic) => {
        let settled: SettleResponse
        try {
          settled = await server.settlePayment(payload, core, undefined, undefined, { amount: chargeAtomic.toString() })
        } catch (error) {
          // A refusal before anything was sent (the charge above what the payer signed, the channel changed)
          const reason = (error as { errorReason?: unknown }).errorReason
          if (typeof reason === 'string') throw new InvalidPaymentError(reason, `settlement refused: ${reason}`)
          throw error
        }
        // a deposit broadcast and unconfirmed after x402's one retry (the resource server's own): it may land
        if (isSettlementPending(settled)) throw new SettlementPendingError(settled.transaction)
        if (settled.success !== true) {
          throw new InvalidPaymentError(settled.errorReason ?? InvalidPaymentReasons.settlementFailed, `settlement failed${settled.errorReason ? `: ${settled.errorReason}` : ''}`)
        }
        if (payment.kind === 'deposit' && settled.transaction) {
          await recordBatchTx(this.#db, { kind: 'deposit', network: requirement.network, txHash: settled.transaction, vouchers: 0, amount: settled.amount ?? '', channelId: payment.channelId }, this.#now())
        }
        return settled as BatchSettled
      },
      cancel: async () => {
        await server.createPaymentCancellationDispatcher(payload, core).cancel({ reason: 'handler_failed' })
      },
    }
  }

  /**
   * A cooperative refund the payer asks for (`type: refund`, a zero-charge voucher at the charged total): the
   * gateway claims what it served, then returns the rest of the deposit (or `amount` of it), in one facilitator
   * call. Returns the scheme's SettleResponse (`amount`: what went back to the payer).
   */
  async refund(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement): Promise<BatchSettled & { channelId: string; payer: string }> {
    const payment = checkBatchPayment(decoded, requirement)
    if (payment.kind !== 'refund') throw new PaymentHeaderInvalidError('this route takes a batch-settlement refund payload (payload.type refund)')
    const { payload, core } = await this.#verify(decoded, requirement, payment)
    let settled: SettleResponse
    try {
      settled = await this.#server.settlePayment(payload, core)
    } catch (error) {
      await this.#server.createPaymentCancellationDispatcher(payload, core).cancel({ reason: 'handler_threw', error })
      const message = error instanceof Error ? error.message : String(error)
      throw new InvalidPaymentError(/^invalid_batch_settlement_evm_/.test(message) ? message : InvalidPaymentReasons.settlementFailed, `refund refused: ${message}`)
    }
    if (settled.success !== true) {
      await this.#server.createPaymentCancellationDispatcher(payload, core).cancel({ reason: 'handler_failed' })
      throw new InvalidPaymentError(settled.errorReason ?? InvalidPaymentReasons.settlementFailed, `refund failed${settled.errorReason ? `: ${settled.errorReason}` : ''}`)
    }
    await recordBatchTx(this.#db, { kind: 'refund', network: requirement.network, txHash: settled.transaction, vouchers: 0, amount: settled.amount ?? '', channelId: payment.channelId }, this.#now())
    return { ...(settled as BatchSettled), channelId: payment.channelId, payer: payment.payer }
  }

  /** The scheme's verification; a refusal becomes the 402 the caller answers (with the correction when due). */
  async #verify(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement, payment: BatchPayment): Promise<{ payload: CorePaymentPayload; core: PaymentRequirements }> {
    const chain = this.#chains.get(requirement.network)
    if (!chain) throw new InvalidPaymentError(InvalidPaymentReasons.networkMismatch, `batch-settlement is not offered on ${requirement.network}`)
    // One object from verify to settle: the scheme keeps the request's reservation by it.
    const payload = { ...decoded.payload, accepted: coreRequirement(requirement) } as unknown as CorePaymentPayload
    const core = coreRequirement(requirement)
    const verdict = await this.#server.verifyPayment(payload, core)
    if (verdict.isValid === true) return { payload, core }
    const reason = verdict.invalidReason ?? InvalidPaymentReasons.facilitatorRejected
    const message = `payment rejected: ${reason}${verdict.invalidMessage ? ` (${verdict.invalidMessage})` : ''}`
    if (reason === CUMULATIVE_MISMATCH) {
      // The message names the channel and the voucher: the 402 built from it finds this correction (CostPayments).
      const mismatch = `the voucher's running total ${payment.maxClaimable} on channel ${payment.channelId} is not the charged total + ${requirement.amount}; resynchronise from accepts[].extra.channelState`
      throw new BatchCumulativeMismatchError(mismatch, requirement.network, await this.#correction(chain, payload, core))
    }
    throw new InvalidPaymentError(reason, message)
  }

  async #correction(chain: Chain, payload: CorePaymentPayload, core: PaymentRequirements): Promise<BatchCorrection | undefined> {
    const accept = { ...core, extra: { ...core.extra } }
    await chain.scheme.enrichPaymentRequiredResponse({
      requirements: [accept],
      paymentPayload: payload,
      error: CUMULATIVE_MISMATCH,
      resourceInfo: { url: '' },
      paymentRequiredResponse: { x402Version: 2, accepts: [accept], resource: { url: '' } } as never,
    })
    const { channelState, voucherState } = accept.extra as Record<string, unknown>
    if (typeof channelState !== 'object' || channelState === null) return undefined
    return { channelState: channelState as Record<string, unknown>, voucherState: (voucherState ?? {}) as Record<string, unknown> }
  }
}
