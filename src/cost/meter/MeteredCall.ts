import type { HttpResult } from '../../shared/http/index.js'
import { InvalidPaymentError, type PaymentRequiredError } from '../../x402/index.js'
import type { CostCallInfo, PaidCall } from '../CostPayments.js'
import { paymentResponseHeader } from '../CostPayments.js'
import type { PaidBy } from '../UsageLedger.js'
import { CallBudget } from './CallBudget.js'
import { callSignals } from './callSignals.js'
import { CallDeadlineError, GenerationBudgetSpentError } from './errors.js'
import type { MeterDeps, MeteredCallRequest, MeteredRun } from './Meter.js'
import { MeteredModelServer } from './MeteredModelServer.js'
import { type CallRecord, recordCall } from './recordCall.js'

/** Who pays for a call: the quota, a payment (claimed and verified), or nobody (the overlord, a free check). */
export type Payer = { paidBy: PaidBy; paid?: PaidCall | undefined }

/** The call started before its quota unit was secured (see `Meter.call`). */
export type Running = Promise<HttpResult>

/**
 * Time the meter leaves between ending a call's generations and its payment's settlement deadline (ms): the
 * stream's end, the last counts and the settlement request itself.
 */
export const SETTLE_LEAD_MS = 2_000

/** The longest delay `setTimeout` takes (2³¹ − 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

const minOf = (...limits: (number | undefined)[]): number | undefined => {
  const set = limits.filter((n): n is number => n !== undefined)
  return set.length > 0 ? Math.min(...set) : undefined
}

/**
 * One metered call, from the moment its payer is known: its budget (the tokens its payment pays for, and the
 * time by which it must be settled) and its model server, then its answer — settled and recorded
 * (`finishWhole`, `finishStream`).
 */
export class MeteredCall {
  readonly started = performance.now()
  readonly deps: MeterDeps
  readonly req: MeteredCallRequest
  readonly info: CostCallInfo
  readonly paidBy: PaidBy
  readonly paid: PaidCall | undefined
  readonly budget: CallBudget
  readonly server: MeteredModelServer
  readonly #controller: AbortController | undefined
  readonly #deadlineAt: number | undefined
  #deadline: NodeJS.Timeout | undefined
  #cut: CallDeadlineError | undefined
  /** Output is on its way to the client (a stream); a whole answer delivers nothing until it is settled. */
  #delivering = false

  constructor(deps: MeterDeps, req: MeteredCallRequest, payer: Payer, o: { early?: boolean } = {}) {
    this.deps = deps
    this.req = req
    this.info = { wallet: req.wallet, route: req.route, method: req.method, path: req.path }
    this.paidBy = payer.paidBy
    this.paid = payer.paid
    const metered = payer.paid?.metered
    this.budget = new CallBudget(minOf(metered?.maxTokens, req.maxTokens))
    const settleBy = payer.paid?.settleDeadlineMs
    this.#deadlineAt = settleBy === undefined ? undefined : settleBy - SETTLE_LEAD_MS
    const { controller, signals } = callSignals(req.signal, { own: o.early === true || this.#deadlineAt !== undefined, drain: metered !== undefined })
    this.#controller = controller
    this.server = new MeteredModelServer(deps.pool, this.budget, signals, { drainOnCancel: metered !== undefined, cutBy: () => this.#cut })
  }

  /** The meter ended the call at its deadline. */
  get cut(): boolean {
    return this.#cut !== undefined
  }

  /**
   * Runs the call (a failure is handled where it is awaited); from now the deadline, if any, runs. A payment
   * that must be settled before the call could even start: the call is not run.
   */
  start(run: MeteredRun): Running {
    let running: Running
    if (this.#deadlineAt !== undefined && this.#deadlineAt <= Date.now()) {
      this.#end()
      running = Promise.reject(this.#cut)
    } else {
      const wait = this.#deadlineAt === undefined ? undefined : this.#deadlineAt - Date.now()
      // a timer longer than Node's longest (~24.8 days) would fire at once: no call runs that long anyway
      if (wait !== undefined && wait <= MAX_TIMER_MS) {
        this.#deadline = setTimeout(() => this.#end(), wait)
        this.#deadline.unref()
      }
      // what it delivered so far is checkpointed from now (`upto` and `batch-settlement`: the payment keeps the
      // heartbeat that tells other replicas the call is alive; no write before the first interval). A whole
      // answer delivers nothing before it is settled: a call killed before then owes nothing (null).
      if (this.paid) this.paid.keepCheckpoints(() => (this.#delivering ? this.budget.servedSoFar : null))
      try {
        running = run(this.server)
      } catch (error) {
        running = Promise.reject(error)
      }
    }
    running.catch(() => {})
    return running
  }

  /** The answer is a stream: what the generations pass on from now reaches the client as it is produced. */
  delivering(): void {
    this.#delivering = true
  }

  /** The deadline: every generation still open is ended (its model-server request closed). */
  #end(): void {
    this.#cut = new CallDeadlineError(
      'payment_expires_too_soon',
      'the call ran until its payment had to be settled: its generation was ended there (sign the payment with a later deadline for longer calls)',
    )
    this.#controller?.abort(this.#cut)
  }

  /** No deadline from now: the call is settled (or has nothing left to settle). */
  endDeadline(): void {
    clearTimeout(this.#deadline)
    this.#deadline = undefined
  }

  /**
   * A call started before its quota unit, refused: its model-server request is closed at once (the model server
   * stops generating), and a stream it may already have is read out — it ends at once with the cut connection —
   * so every layer under it lets go (connections, the pool's in-flight count). Nothing of it reaches the client.
   */
  abandon(running: Running): void {
    this.#controller?.abort()
    void running
      .then(async (result) => {
        if (result.stream) for await (const _ of result.stream) void _
      })
      .catch(() => {})
  }

  /** Gives the call's quota unit or payment claim back (it produced nothing). */
  async giveBack(): Promise<void> {
    if (this.paid) await this.paid.release()
    else if (this.paidBy === 'quota') await this.deps.quota.refund(this.req.wallet, this.req.network)
  }

  /** Records the call just after the response's last bytes are written (a SQLite commit blocks the event loop). */
  record(r: CallRecord): void {
    const durationMs = performance.now() - this.started
    setImmediate(() => {
      const paid = this.paid
      recordCall(
        this.deps,
        { wallet: this.req.wallet, route: this.req.route, model: this.req.model, paidBy: this.paidBy, payment: paid && { paymentId: paid.paymentId, amountAtomic: paid.amountAtomic }, durationMs },
        r,
      )
    })
  }

  /** Settles; a refused settlement throws the 402 with the requirements again (the output is withheld). */
  async settle(tokens: number, delivered: boolean): Promise<{ headers: Record<string, string> }> {
    try {
      return { headers: paymentResponseHeader(await (this.paid as PaidCall).settle(tokens, { delivered })) }
    } catch (error) {
      if (error instanceof InvalidPaymentError) throw this.deps.payments.refusal(this.info, { code: error.code, message: error.shortMessage })
      throw error
    }
  }

  /** The 402 of a call the meter ended before it produced anything: its deadline, or a payment for no token. */
  refusalOf(error: unknown): PaymentRequiredError | undefined {
    if (!this.paid) return undefined
    if (this.#cut) return this.deps.payments.refusal(this.info, { code: this.#cut.code, message: this.#cut.shortMessage })
    if (error instanceof GenerationBudgetSpentError) return this.deps.payments.refusal(this.info, { code: 'insufficient_amount', message: error.shortMessage })
    return undefined
  }

  /** A call that failed before any output: nothing is paid, and the meter's own refusals are thrown as 402s. */
  async failed(error: unknown): Promise<never> {
    this.endDeadline()
    await this.giveBack()
    const refusal = this.refusalOf(error)
    this.record({ status: this.req.statusOf(refusal ?? error), outcome: 'error', usage: this.budget.totals.usage, streamed: false, ttftMs: null, settled: false, generationS: null })
    throw refusal ?? error
  }
}
