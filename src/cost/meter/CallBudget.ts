import type { CallUsage } from '../callUsage.js'
import { GenerationBudgetSpentError } from './errors.js'

/** One generation's part of the call's budget: what it may produce, and how its count is reported back. */
export type GenerationAccount = {
  /** The most completion tokens this generation may produce (`undefined`: the call has no cap). */
  readonly maxTokens: number | undefined
  /** The model server reported what this generation produced (its own counts). */
  counted(usage: CallUsage): void
  /**
   * The generation ended without the model server's count (cut by the meter's deadline, the model server
   * failed, or it was cancelled): it is taken to have produced all it was allowed — never less than it served.
   * `failed`: it ended on a failure (the model server's error, not a cancellation).
   */
  uncounted(o?: { failed?: boolean }): void
  /**
   * While it streams: how many pieces it has passed on so far (an estimate of its tokens, read only by a
   * checkpoint of a call paid per token, never billed once the model server's count is in).
   */
  watch(passed: () => number): void
}

/** What the call produced, summed over its generations. */
export type CallTotals = {
  usage: CallUsage
  /** Completion tokens to bill: those counted plus the whole allowance of every generation that went uncounted. */
  billableTokens: number
  /** Some generation ended without the model server's count. */
  uncounted: boolean
  /** Some generation ended on a failure of the model server. */
  failed: boolean
}

/**
 * The token budget of one metered call, shared by all of its generations (an agent route that runs eight
 * generations has one budget): each generation reserves its share before it is sent to the model server and
 * gives back what it did not use once the model server's count is in. With no cap (quota, the overlord, an
 * `exact` payment) it only sums the counts for the usage ledger.
 */
export class CallBudget {
  readonly maxTokens: number | undefined
  #counted = 0
  #reserved = 0
  #uncountedTokens = 0
  #uncounted = false
  #failed = false
  #prompt = 0
  #evalSeconds = 0
  #model: string | undefined
  #open = 0
  /** The generations streaming now: what each may produce and how much it passed on so far. */
  readonly #live = new Set<{ maxTokens: number | undefined; passed: () => number }>()
  #idle: (() => void)[] = []

  constructor(maxTokens: number | undefined) {
    this.maxTokens = maxTokens
  }

  /** Tokens not yet produced nor promised to a generation in flight (`undefined`: no cap). */
  get remaining(): number | undefined {
    if (this.maxTokens === undefined) return undefined
    return Math.max(0, this.maxTokens - this.#counted - this.#uncountedTokens - this.#reserved)
  }

  /**
   * Opens a generation. `of`: how many generations of the call are still to run, this one included — each
   * gets an even share of what is left (at least one token), so the last agent of a coordinator task is not
   * left with nothing because the first one talked on. `asked`: a smaller limit the request itself sets.
   * Throws `GenerationBudgetSpentError` when no token is left.
   */
  open(of = 1, asked?: number): GenerationAccount {
    const remaining = this.remaining
    let maxTokens: number | undefined
    if (remaining !== undefined) {
      if (remaining <= 0) throw new GenerationBudgetSpentError('generation_budget_spent', `this call's payment pays for ${this.maxTokens} completion tokens and they are spent`)
      maxTokens = Math.max(1, Math.floor(remaining / Math.max(1, Math.floor(of))))
      if (asked !== undefined && asked > 0 && asked < maxTokens) maxTokens = Math.floor(asked)
      this.#reserved += maxTokens
    }
    return this.#account(maxTokens)
  }

  #account(maxTokens: number | undefined): GenerationAccount {
    this.#open++
    let closed = false
    const live = { maxTokens, passed: () => 0 }
    const close = () => {
      if (closed) return false
      closed = true
      this.#live.delete(live)
      if (maxTokens !== undefined) this.#reserved -= maxTokens
      this.#open--
      return true
    }
    return {
      maxTokens,
      counted: (usage) => {
        if (!close()) return
        this.#add(usage)
        this.#counted += usage.completionTokens ?? 0
        this.#idleIfDone()
      },
      uncounted: (o) => {
        if (!close()) return
        this.#uncounted = true
        if (o?.failed) this.#failed = true
        if (maxTokens !== undefined) this.#uncountedTokens += maxTokens
        this.#idleIfDone()
      },
      watch: (passed) => {
        if (closed) return
        live.passed = passed
        this.#live.add(live)
      },
    }
  }

  /** Opens work that produces no completion tokens (an embedding): never refused for a spent budget. */
  track(): GenerationAccount {
    return this.#account(undefined)
  }

  #add(usage: CallUsage): void {
    if (usage.model !== undefined) this.#model = usage.model
    this.#prompt += usage.promptTokens ?? 0
    this.#evalSeconds += usage.evalSeconds ?? 0
  }

  #idleIfDone(): void {
    if (this.#open > 0) return
    for (const resolve of this.#idle.splice(0)) resolve()
  }

  /** Resolves once no generation of the call is open (a stream being read to its count included). */
  whenIdle(): Promise<void> {
    if (this.#open === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  /**
   * What a checkpoint of a running call bills if the call never gets to its end (its instance dies): the
   * billable tokens of the generations that ended, plus — for each generation still streaming — the pieces it
   * passed on so far, at most its share. A streamed piece carries at least one token on the model servers the
   * gateway proxies (one token per NDJSON chunk or SSE event; a few framing events count too, never above the share).
   */
  get servedSoFar(): number {
    let streaming = 0
    for (const g of this.#live) streaming += g.maxTokens === undefined ? g.passed() : Math.min(g.maxTokens, g.passed())
    return this.#counted + this.#uncountedTokens + streaming
  }

  get totals(): CallTotals {
    const usage: CallUsage = { completionTokens: this.#counted, promptTokens: this.#prompt }
    if (this.#model !== undefined) usage.model = this.#model
    if (this.#evalSeconds > 0) usage.evalSeconds = this.#evalSeconds
    return { usage, billableTokens: this.#counted + this.#uncountedTokens, uncounted: this.#uncounted, failed: this.#failed }
  }
}
