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

/** `application_name` of the listening connection (visible in `pg_stat_activity`), then `:<md5 of the schema>`. */
export const CHANGE_FEED_APPLICATION_NAME = 'gateway-change-feed'

/**
 * Changes of a PostgreSQL schema, from the NOTIFYs its triggers send (migration `0012_change_feed`). NOTIFY is
 * delivered at commit, whoever wrote (any gateway instance, a CLI, a manual SQL statement), so one dedicated
 * connection that LISTENs sees every change. Fail safe: the feed is live only while that connection is
 * listening; losing it reports `all` (caches drop everything and are bypassed), and it reconnects with
 * exponential backoff, reporting `all` again once listening (a read from before then is not kept).
 *
 * `barrier` makes a write through one instance take effect on every instance before it is answered: it
 * sends `!sync:<nonce>` on the channel, and every listener of the schema (found in `pg_stat_activity` by its
 * `application_name`) answers `!ack:<pid>:<nonce>` once it has reported every change before it. A NOTIFY
 * alone reaches the other instances asynchronously, a fraction of a millisecond after the writer's commit
 * returns (measured with a writer and two listeners: 39 in 300 had not reached the second listener by then).
 */
export type PostgresChangeFeed = ChangeFeed & {
  /** Backend PID of the listening connection while live (tests terminate it). */
  backendPid(): number | undefined
}

type Barriers = Map<string, { awaited: Set<number>; done: () => void }>

/**
 * Connects `next` and listens on its schema's channel, named after the schema so a barrier finds every listener
 * of this schema in pg_stat_activity. Throws when the change triggers are missing (migration 0012_change_feed not
 * applied to this schema): nothing would ever be reported, so the feed stays not live and looks again later.
 */
async function startListening(next: pg.Client, onPid: (pid: number) => void): Promise<{ channel: string; listenerName: string }> {
  await next.connect()
  const { rows } = await next.query<{ channel: string; hash: string; pid: number }>(
    `select ${changeChannelSql('current_schema()')} as channel, md5(current_schema()) as hash, pg_backend_pid() as pid`,
  )
  const channel = rows[0]!.channel
  onPid(rows[0]!.pid)
  const listenerName = `${CHANGE_FEED_APPLICATION_NAME}:${rows[0]!.hash}`
  await next.query(`SET application_name = '${listenerName}'`)
  await next.query(`LISTEN "${channel}"`)
  const triggers = await next.query<{ n: number }>(
    `select count(*)::int as n from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = current_schema()::regnamespace and t.tgname = any($1)`,
    [['sessions_notify_change', 'agent_revisions_notify_change']],
  )
  if (triggers.rows[0]!.n !== 2) throw new Error('change triggers missing (migration 0012_change_feed not applied)')
  return { channel, listenerName }
}

/** Sends `!sync:<nonce>` and resolves true once every listener in `pids` acknowledged it, false after `timeoutMs`. */
function syncBarrier(c: pg.Client, channel: string, nonce: string, pids: number[], barriers: Barriers, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const finish = (ok: boolean) => {
      clearTimeout(timer)
      barriers.delete(nonce)
      resolve(ok)
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    barriers.set(nonce, { awaited: new Set(pids), done: () => finish(true) })
    c.query('select pg_notify($1, $2)', [channel, `!sync:${nonce}`]).catch(() => finish(false))
  })
}

/** One NOTIFY on the channel: a barrier's sync (answer it), an acknowledgement of ours (count it), or a changed row (report it). */
function onNotification(payload: string, acknowledge: (nonce: string) => void, barriers: Barriers, listeners: ChangeListeners): void {
  if (payload.startsWith('!sync:')) {
    // Every change committed before this barrier has been reported to our listeners (one channel is
    // delivered in commit order): say so to the instance waiting for it.
    acknowledge(payload.slice('!sync:'.length))
    return
  }
  if (payload.startsWith('!ack:')) {
    const [, pid, nonce] = payload.split(':')
    const barrier = barriers.get(nonce ?? '')
    if (barrier && barrier.awaited.delete(Number(pid)) && barrier.awaited.size === 0) barrier.done()
    return
  }
  const colon = payload.indexOf(':')
  listeners.emit({ kind: 'row', table: payload.slice(0, colon), key: payload.slice(colon + 1) })
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
  let channel = ''
  let listenerName = ''
  /** Backend PID of the connection `client` (asked with `pg_backend_pid()`: pg's own field for it is private). */
  let clientPid: number | undefined
  /** Barriers in flight: the listener PIDs whose acknowledgement is still awaited, by nonce. */
  const barriers: Barriers = new Map()
  let nonces = 0

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
    clientPid = undefined
    next.on('error', (error) => lost(next, error.message))
    next.on('end', () => lost(next, 'connection ended'))
    next.on('notification', (message) => {
      if (!listening || next !== client) return
      const acknowledge = (nonce: string) => void next.query('select pg_notify($1, $2)', [channel, `!ack:${clientPid}:${nonce}`]).catch(() => undefined)
      onNotification(message.payload ?? '', acknowledge, barriers, listeners)
    })
    try {
      const listener = await startListening(next, (pid) => {
        if (next === client) clientPid = pid
      })
      channel = listener.channel
      listenerName = listener.listenerName
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
    async barrier(timeoutMs) {
      const c = client
      if (!listening || !c) return false
      try {
        const { rows } = await c.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1 and datname = current_database()', [listenerName])
        if (rows.length === 0) return true
        return await syncBarrier(c, channel, `${clientPid}-${++nonces}`, rows.map((r) => r.pid), barriers, timeoutMs)
      } catch {
        return false
      }
    },
    backendPid: () => (listening && client ? clientPid : undefined),
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
