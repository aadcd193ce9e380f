import { type Kysely, sql } from 'kysely'
import { type BackgroundCommit, directCommit } from '../db/createBackgroundCommit.js'
import type { Database } from '../db/Database.js'
import { type PrecompiledQuery, precompiledQuery } from '../db/precompiledQuery.js'
import { ulid } from '../storage/ids.js'

/**
 * How a metered call was paid: a unit of the daily quota, an x402 payment, or nothing — the shadow overlord, or
 * a free check (`POST /llm/test`, capped at a few tokens).
 */
export type PaidBy = 'quota' | 'payment' | 'overlord' | 'free'
/** `cancelled`: the client went away before the stream ended. */
export type CallOutcome = 'ok' | 'error' | 'cancelled'

export type UsageRecord = {
  wallet: string
  route: string
  model: string
  promptTokens: number
  completionTokens: number
  durationMs: number
  ttftMs: number | null
  streamed: boolean
  outcome: CallOutcome
  status: number
  paidBy: PaidBy
  paymentId: string | null
  amountAtomic: bigint | null
}

/** One UTC day of a wallet's usage (`LlmUsageDay` of the document). */
export type UsageDay = {
  day: string
  calls: number
  paid_calls: number
  errors: number
  prompt_tokens: number
  completion_tokens: number
  /** Atomic units settled that day (decimal string). */
  spend_atomic: string
}

const dayOf = (epochS: number) => new Date(epochS * 1000).toISOString().slice(0, 10)

/** The columns of a record, in the order the precompiled insert binds them. */
const COLUMNS = [
  'usage_id',
  'wallet',
  'route',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'duration_ms',
  'ttft_ms',
  'streamed',
  'outcome',
  'status',
  'paid_by',
  'payment_id',
  'amount_atomic',
  'day',
  'created_at',
] as const
type Row = { [C in (typeof COLUMNS)[number]]: string | number | null }

/** `llm_usage` (migration 0010): one row per cost call; the per-day view of `GET /llm/usage`. */
export class UsageLedger {
  /**
   * The insert of a record, compiled once: it runs after every cost call, and building and compiling the
   * 16-column statement through Kysely cost more CPU than SQLite's insert itself.
   */
  readonly #insertRow: PrecompiledQuery<Database, Row[(typeof COLUMNS)[number]][], unknown>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
    /**
     * How a record is committed (the database handle's `groupCommit`): it is written after the call's answer, so a
     * commit that held the event loop for the disk would hold back the caller's next call, and its own sync would
     * cost more CPU than the insert: it shares the next commit's sync (a client's next quota unit, say).
     */
    private readonly commit: BackgroundCommit = directCommit(db),
  ) {
    // a record under an id already taken is ignored (an interrupted call's, recorded by two takers in turn)
    this.#insertRow = precompiledQuery(db, COLUMNS.length, (q, ...placeholders) =>
      q
        .insertInto('llm_usage')
        .values(Object.fromEntries(COLUMNS.map((column, i) => [column, placeholders[i]])) as never)
        .onConflict((oc) => oc.column('usage_id').doNothing()),
    )
  }

  /** Resolves once the record is committed and as durable as the database's configured level makes it. */
  async record(r: UsageRecord): Promise<void> {
    await this.#insert(`use_${ulid()}`, r)
  }

  /**
   * Records the usage of a call another replica took over after its instance died (`InterruptedCalls`), under
   * an id derived from its payment: a second record of the same payment (a taker that crashed after writing it,
   * and the next taker) is ignored, so the call counts once.
   */
  async recordInterrupted(paymentId: string, r: UsageRecord): Promise<void> {
    await this.#insert(`use_int_${paymentId}`, r)
  }

  async #insert(usageId: string, r: UsageRecord): Promise<void> {
    const t = this.now()
    const row: Row = {
      usage_id: usageId,
      wallet: r.wallet.toLowerCase(),
      route: r.route,
      model: r.model.slice(0, 256),
      prompt_tokens: Math.max(0, Math.round(r.promptTokens)),
      completion_tokens: Math.max(0, Math.round(r.completionTokens)),
      duration_ms: Math.max(0, Math.round(r.durationMs)),
      ttft_ms: r.ttftMs === null ? null : Math.max(0, Math.round(r.ttftMs)),
      streamed: r.streamed ? 1 : 0,
      outcome: r.outcome,
      status: r.status,
      paid_by: r.paidBy,
      payment_id: r.paymentId,
      amount_atomic: r.amountAtomic === null ? null : r.amountAtomic.toString(),
      day: dayOf(t),
      created_at: t,
    }
    const values = COLUMNS.map((column) => row[column])
    await this.commit((db) => this.#insertRow.on(db)(...values))
  }

  /** `byDay` plus the totals over the window (`LlmUsage` of the document, without the quota). */
  async report(wallet: string, days: number): Promise<{ from: string; to: string; days: UsageDay[]; totals: Omit<UsageDay, 'day'> }> {
    const view = await this.byDay(wallet, days)
    const totals = { calls: 0, paid_calls: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, spend_atomic: '0' }
    let spend = 0n
    for (const d of view.days) {
      totals.calls += d.calls
      totals.paid_calls += d.paid_calls
      totals.errors += d.errors
      totals.prompt_tokens += d.prompt_tokens
      totals.completion_tokens += d.completion_tokens
      spend += BigInt(d.spend_atomic)
    }
    totals.spend_atomic = spend.toString()
    return { ...view, totals }
  }

  /** The wallet's usage per UTC day over the last `days` days (today included), oldest first; idle days left out. */
  async byDay(wallet: string, days: number): Promise<{ from: string; to: string; days: UsageDay[] }> {
    const now = this.now()
    const from = dayOf(now - (days - 1) * 86_400)
    const rows = await this.db
      .selectFrom('llm_usage')
      .where('wallet', '=', wallet.toLowerCase())
      .where('day', '>=', from)
      .select([
        'day',
        sql<number | string>`count(*)`.as('calls'),
        sql<number | string>`sum(case when payment_id is null then 0 else 1 end)`.as('paid_calls'),
        sql<number | string>`sum(case when outcome = 'ok' then 0 else 1 end)`.as('errors'),
        sql<number | string>`sum(prompt_tokens)`.as('prompt_tokens'),
        sql<number | string>`sum(completion_tokens)`.as('completion_tokens'),
      ])
      .groupBy('day')
      .orderBy('day')
      .execute()
    // Amounts are decimal strings summed as bigint here: SQLite's SUM would come back as a double.
    const paid = await this.db
      .selectFrom('llm_usage')
      .where('wallet', '=', wallet.toLowerCase())
      .where('day', '>=', from)
      .where('amount_atomic', 'is not', null)
      .select(['day', 'amount_atomic'])
      .execute()
    const spend = new Map<string, bigint>()
    for (const p of paid) spend.set(p.day, (spend.get(p.day) ?? 0n) + BigInt(p.amount_atomic as string))
    return {
      from,
      to: dayOf(now),
      days: rows.map((r) => ({
        day: r.day,
        calls: Number(r.calls),
        paid_calls: Number(r.paid_calls ?? 0),
        errors: Number(r.errors ?? 0),
        prompt_tokens: Number(r.prompt_tokens ?? 0),
        completion_tokens: Number(r.completion_tokens ?? 0),
        spend_atomic: (spend.get(r.day) ?? 0n).toString(),
      })),
    }
  }
}
