import pg from 'pg'
import type { ChangeFeed } from './ChangeFeed.js'
import { changeChannelSql } from './changeChannel.js'
import { ChangeListeners } from './ChangeListeners.js'

export type PostgresChangeFeedParameters = {
  /** The gateway's connection URL (its `search_path` option, if any, selects the schema listened to). */
  url: string
  /**
   * First reconnection delay (default 500 ms), doubled after each failure up to `maxBackoffMs` (5 s). The
   * caches are bypassed meanwhile, which is correct, only slower.
   */
  minBackoffMs?: number
  maxBackoffMs?: number
  /** How often the listening connection is checked with a query (a silently dead TCP connection). */
  heartbeatMs?: number
}

/** `application_name` of the listening connection (visible in `pg_stat_activity`). */
export const CHANGE_FEED_APPLICATION_NAME = 'gateway-change-feed'

/**
 * Changes of a PostgreSQL schema, from the NOTIFYs its triggers send (migration `0012_17cache`). NOTIFY is
 * delivered at commit, whoever wrote (any gateway instance, a CLI, a manual SQL statement), so one dedicated
 * connection that LISTENs sees every change. Fail safe: the feed is live only while that connection is
 * listening; losing it reports `all` (caches drop everything and are bypassed), and it reconnects with
 * exponential backoff, reporting `all` again once listening (a read from before then is not kept).
 */
export type PostgresChangeFeed = ChangeFeed & {
  /** Backend PID of the listening connection while live (tests terminate it). */
  backendPid(): number | undefined
}

export function postgresChangeFeed({ url, minBackoffMs = 500, maxBackoffMs = 5_000, heartbeatMs = 10_000 }: PostgresChangeFeedParameters): PostgresChangeFeed {
  const listeners = new ChangeListeners()
  let client: pg.Client | undefined
  let listening = false
  let closed = false
  let started: Promise<void> | undefined
  let backoffMs = minBackoffMs
  let retry: NodeJS.Timeout | undefined
  let heartbeat: NodeJS.Timeout | undefined

  const lost = (which: pg.Client, reason: string) => {
    if (which !== client) return
    client = undefined
    clearInterval(heartbeat)
    if (listening) {
      listening = false
      listeners.emit({ kind: 'all', reason: `change feed lost: ${reason}` })
    }
    void which.end().catch(() => undefined)
    if (!closed) {
      retry = setTimeout(() => void connect(), backoffMs)
      retry.unref()
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs)
    }
  }

  const connect = async (): Promise<void> => {
    if (closed) return
    const next = new pg.Client({ connectionString: url, application_name: CHANGE_FEED_APPLICATION_NAME, keepAlive: true, query_timeout: 5_000 })
    client = next
    next.on('error', (error) => lost(next, error.message))
    next.on('end', () => lost(next, 'connection ended'))
    next.on('notification', (message) => {
      if (!listening || next !== client) return
      const payload = message.payload ?? ''
      const colon = payload.indexOf(':')
      listeners.emit({ kind: 'row', table: payload.slice(0, colon), key: payload.slice(colon + 1) })
    })
    try {
      await next.connect()
      const { rows } = await next.query<{ channel: string }>(`select ${changeChannelSql('current_schema()')} as channel`)
      await next.query(`LISTEN "${rows[0]!.channel}"`)
      if (next !== client || closed) return
      listening = true
      backoffMs = minBackoffMs
      // Anything read before now may predate a change we were not told about.
      listeners.emit({ kind: 'all', reason: 'change feed listening' })
      heartbeat = setInterval(() => {
        next.query('select 1').catch((error: Error) => lost(next, error.message))
      }, heartbeatMs)
      heartbeat.unref()
    } catch (error) {
      lost(next, (error as Error).message)
    }
  }

  return {
    live: () => listening,
    subscribe(listener) {
      started ??= connect()
      return listeners.add(listener)
    },
    ready: () => started ?? Promise.resolve(),
    backendPid: () => (listening ? (client as unknown as { processID?: number } | undefined)?.processID : undefined),
    async close() {
      closed = true
      clearTimeout(retry)
      clearInterval(heartbeat)
      const current = client
      client = undefined
      if (listening) {
        listening = false
        listeners.emit({ kind: 'all', reason: 'change feed closed' })
      }
      await current?.end().catch(() => undefined)
    },
  }
}
