import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { createReadStream } from 'node:fs'
import { access, appendFile, mkdir } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { dirname, resolve } from 'node:path'
import type { Insertable, Kysely } from 'kysely'
import { type BackgroundCommit, directCommit } from '../db/createBackgroundCommit.js'
import type { Database } from '../db/Database.js'
import { groupedWrites } from '../shared/groupedWrites.js'
import type { Logger } from '../shared/logger.js'
import type { CatalogueEvent, CatalogueEventInput, EventSink } from './EventSink.js'

export type CatalogueParameters = {
  db: Kysely<Database>
  /** The append-only JSON-lines log (created when missing). */
  logPath: string
  logger?: Logger | undefined
  /** Epoch milliseconds (tests move time). */
  now?: () => number
  /**
   * How an event's index row is committed (the database handle's `backgroundCommit`). Events come with
   * requests anyone can send — a browser without a session gets a redirect and an `auth.gate.redirect` event —
   * and a commit whose fsync held the event loop would hold every other request for the disk each time.
   */
  commit?: BackgroundCommit | undefined
}

export type RecentQuery = { kind?: string | undefined; limit?: number | undefined }

let lastMs = 0
let counter = 0
/** Sortable unique id: `evt_` + milliseconds (base 36, fixed width) + a per-ms counter + randomness. */
export function newEventId(nowMs: number): string {
  if (nowMs === lastMs) counter++
  else {
    lastMs = nowMs
    counter = 0
  }
  return `evt_${nowMs.toString(36).padStart(9, '0')}${counter.toString(36).padStart(3, '0')}${randomBytes(5).toString('hex')}`
}

/**
 * The catalogue (seed 000 §2.6, §6.1): every event is first appended as one JSON line to the log — the
 * record — and then indexed in the database for queries. Events emitted while a write is under way share the
 * next: one append of all their lines, in order, and one transaction of all their index rows (events come with
 * requests anyone can send, and a burst of them would otherwise cost an open, a write and a close of the log
 * and a commit each). `emit` resolves once its own line is appended and its row committed. `O_APPEND` keeps
 * whole lines when several processes share one log.
 */
export class Catalogue implements EventSink {
  readonly logPath: string
  private readonly db: Kysely<Database>
  private readonly logger: Logger | undefined
  private readonly now: () => number
  private readonly appendLine: (line: string) => Promise<void>
  private readonly indexRow: (row: Insertable<Database['catalogue_events']>) => Promise<void>
  private dirReady: Promise<unknown> | undefined

  constructor({ db, logPath, logger, now = Date.now, commit = directCommit(db) }: CatalogueParameters) {
    this.db = db
    this.logPath = resolve(logPath)
    this.logger = logger
    this.now = now
    this.appendLine = groupedWrites(async (lines) => {
      this.dirReady ??= mkdir(dirname(this.logPath), { recursive: true })
      await this.dirReady
      await appendFile(this.logPath, lines.join(''), { flag: 'a' })
    })
    this.indexRow = groupedWrites(async (rows) => {
      await commit((db) => db.insertInto('catalogue_events').values([...rows]).execute())
    })
  }

  async emit(input: CatalogueEventInput): Promise<CatalogueEvent> {
    const nowMs = this.now()
    const event: CatalogueEvent = {
      event_id: newEventId(nowMs),
      kind: input.kind,
      actor: input.actor ?? 'service.gateway',
      at: Math.floor(nowMs / 1000),
      severity: input.severity ?? 'info',
      payload: input.payload,
      source_log: this.logPath,
    }
    await this.appendLine(`${JSON.stringify(event)}\n`)
    try {
      await this.indexRow({ ...event, payload: JSON.stringify(event.payload) })
    } catch (error) {
      // The log holds the event; a failed index write is repaired by re-indexing from the log.
      this.logger?.error({ err: error, event_id: event.event_id, kind: event.kind }, 'catalogue index write failed')
    }
    return event
  }

  /** Newest first. */
  async recent({ kind, limit = 50 }: RecentQuery = {}): Promise<CatalogueEvent[]> {
    let query = this.db.selectFrom('catalogue_events').selectAll()
    if (kind) query = query.where('kind', '=', kind)
    const rows = await query.orderBy('at', 'desc').orderBy('event_id', 'desc').limit(limit).execute()
    return rows.map((row) => ({
      event_id: row.event_id,
      kind: row.kind,
      actor: row.actor,
      at: Number(row.at),
      severity: row.severity as CatalogueEvent['severity'],
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      source_log: row.source_log,
    }))
  }

  /**
   * Indexes every event of the log that the database does not have (an index write that failed, a database
   * restored from an older backup). Streams the log; returns how many events were added.
   */
  async reindex(): Promise<number> {
    let added = 0
    let batch: CatalogueEvent[] = []
    const flush = async () => {
      if (batch.length === 0) return
      const ids = batch.map((e) => e.event_id)
      const known = new Set(
        (await this.db.selectFrom('catalogue_events').select('event_id').where('event_id', 'in', ids).execute()).map((r) => r.event_id),
      )
      const missing = batch.filter((e) => !known.has(e.event_id))
      if (missing.length > 0) {
        await this.db
          .insertInto('catalogue_events')
          .values(missing.map((e) => ({ ...e, payload: JSON.stringify(e.payload) })))
          .onConflict((oc) => oc.column('event_id').doNothing())
          .execute()
        added += missing.length
      }
      batch = []
    }
    let stream
    try {
      await access(this.logPath, constants.R_OK)
      stream = createReadStream(this.logPath, 'utf8')
    } catch {
      return 0
    }
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (!line.trim()) continue
      try {
        const event = JSON.parse(line) as CatalogueEvent
        if (typeof event.event_id === 'string' && typeof event.kind === 'string') batch.push({ ...event, severity: event.severity ?? 'info' })
      } catch {
        this.logger?.warn({ source_log: this.logPath }, 'catalogue log holds a line that is not JSON; skipped')
      }
      if (batch.length >= 200) await flush()
    }
    await flush()
    return added
  }

  /** Whether the log can be appended to (the file, or its directory when it does not exist yet). */
  async checkWritable(): Promise<void> {
    try {
      await access(this.logPath, constants.W_OK)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      await mkdir(dirname(this.logPath), { recursive: true })
      await access(dirname(this.logPath), constants.W_OK)
    }
  }
}

/** One line a human reads (`h=true`). */
export function summarizeEvent(event: CatalogueEvent): string {
  const p = event.payload
  switch (event.kind) {
    case 'auth.gate.redirect':
      return `Gate redirected ${String(p.path)} to /login (${String(p.reason)}) for ${String(p.ip_hash).slice(0, 19)}…`
    case 'auth.login':
      return `Wallet ${String(p.wallet)} logged in`
    case 'auth.logout':
      return `Wallet ${String(p.wallet)} logged out`
    case 'admin.shadow_overlord_action':
      return `Shadow overlord ${String(p.scope ?? p.action ?? 'action')} on ${String(p.target ?? '-')}: ${String(p.outcome ?? '')}`.trim()
    case 'admin.cabinet.provisioned':
      return `Cabinet ${String(p.company)} provisioned`
    case 'admin.cabinet.cleared':
      return `Cabinet ${String(p.company)} cleared`
    case 'llm.call.paid':
      return `Wallet ${String(p.wallet)} paid ${String(p.amount_atomic)} atomic units on ${String(p.network)} for ${String(p.route)} (${String(p.tx_hash)})`
    case 'feedback.submitted':
      return `Feedback from ${String(p.wallet)}${p.page ? ` on ${String(p.page)}` : ''}: ${String(p.message).slice(0, 80)}`
    default:
      return `${event.kind} by ${event.actor}`
  }
}
