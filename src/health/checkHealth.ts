import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'

/** One dependency's health: `down` carries what failed; latency in ms, rounded to the microsecond. */
export type HealthCheck = { status: 'ok' | 'down'; latency_ms: number; detail?: string }

export type HealthReport = {
  /** `degraded` (still answered 200) when any check is down: liveness is `GET /health`. */
  status: 'ok' | 'degraded'
  checks: { database: HealthCheck; modelserver: HealthCheck; catalogue_log: HealthCheck }
}

export type CheckHealthParameters = {
  db: Kysely<Database>
  modelServer: { version(signal?: AbortSignal): Promise<unknown> }
  catalogue: { checkWritable(): Promise<unknown> }
  signal?: AbortSignal
  /** Per check; a slower dependency counts as down (default 2000). */
  timeoutMs?: number
}

/** `GET /health/detailed`: the database, the model server and the catalogue log, checked concurrently. */
export async function checkHealth({ db, modelServer, catalogue, signal, timeoutMs = 2000 }: CheckHealthParameters): Promise<HealthReport> {
  const [database, modelserver, catalogue_log] = await Promise.all([
    timed(() => db.selectFrom('catalogue_events').select('event_id').limit(1).execute(), timeoutMs),
    timed(() => modelServer.version(signal), timeoutMs),
    timed(() => catalogue.checkWritable(), timeoutMs),
  ])
  const checks = { database, modelserver, catalogue_log }
  return { status: Object.values(checks).every((c) => c.status === 'ok') ? 'ok' : 'degraded', checks }
}

async function timed(check: () => Promise<unknown>, timeoutMs: number): Promise<HealthCheck> {
  const t0 = performance.now()
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref()),
    ])
    return { status: 'ok', latency_ms: round(performance.now() - t0) }
  } catch (error) {
    return { status: 'down', latency_ms: round(performance.now() - t0), detail: error instanceof Error ? error.message : String(error) }
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000
