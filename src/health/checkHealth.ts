import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'

/** One dependency's health: `down` carries what failed; latency in ms, rounded to the microsecond. */
export type HealthCheck = { status: 'ok' | 'down'; latency_ms: number; detail?: string }

export type HealthReport = {
  /** `degraded` (still answered 200) when any check is not `ok`: liveness is `GET /health`. */
  status: 'ok' | 'degraded'
  checks: { database: HealthCheck; modelserver: HealthCheck | ExtraCheck; catalogue_log: HealthCheck } & Record<string, HealthCheck | ExtraCheck>
}

/** A domain's check: `status` other than `ok`/`down` (e.g. `low`) and extra fields (e.g. a balance). */
export type ExtraCheck = { status: string; latency_ms: number; detail?: string; [field: string]: unknown }

/**
 * More checks by name (paid storage adds its upstream, facilitators, Algorand node and credit). A check
 * resolves to nothing (ok) or to fields merged into the result (`status` included); a throw is `down`.
 */
export type ExtraChecks = Record<string, () => Promise<Record<string, unknown> | void>>

export type CheckHealthParameters = {
  db: Kysely<Database>
  /**
   * The model server(s): `status` (`ok`, `partial` when some of several are down, `down`), `detail`, `servers`;
   * `servers()`: each one as last seen, for the report when the check itself fails or runs out of time.
   */
  modelServer: { check(): Promise<{ status: string; detail?: string; servers: unknown[] }>; servers(): { url: string }[] }
  catalogue: { checkWritable(): Promise<unknown> }
  signal?: AbortSignal
  /** Per check; a slower dependency counts as down (default 2000). */
  timeoutMs?: number
  extra?: ExtraChecks | undefined
}

/**
 * `GET /health/detailed`: the database, the model server(s) (each one's `/api/tags`, reported per server) and
 * the catalogue log, checked concurrently.
 */
export async function checkHealth({ db, modelServer, catalogue, signal, timeoutMs = 2000, extra = {} }: CheckHealthParameters): Promise<HealthReport> {
  const extraNames = Object.keys(extra)
  const [database, modelserver, catalogue_log, ...extraResults] = await Promise.all([
    timed(() => db.selectFrom('catalogue_events').select('event_id').limit(1).execute(), timeoutMs),
    timed(() => modelServer.check(), timeoutMs, true),
    timed(() => catalogue.checkWritable(), timeoutMs),
    ...extraNames.map((name) => timed(extra[name] as () => Promise<unknown>, timeoutMs, true)),
  ])
  // The document promises `servers` on this check: a check that failed or timed out lists each configured server
  // as down for this report, with why (found by the fuzzer on a loaded machine: a 2 s timeout, no `servers`).
  if (modelserver.status === 'down' && !('servers' in modelserver)) {
    const why = modelserver.detail ?? 'down'
    Object.assign(modelserver, { servers: modelServer.servers().map((server) => ({ ...server, status: 'down', last_error: why })) })
  }
  const checks: HealthReport['checks'] = { database, modelserver, catalogue_log }
  extraNames.forEach((name, i) => {
    checks[name] = extraResults[i] as ExtraCheck
  })
  return { status: Object.values(checks).every((c) => c.status === 'ok') ? 'ok' : 'degraded', checks }
}

/** Runs one check with a deadline; `withFields`: an object the check resolves to is merged into the result. */
async function timed(check: () => Promise<unknown>, timeoutMs: number, withFields = false): Promise<HealthCheck> {
  const t0 = performance.now()
  try {
    const fields = await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref()),
    ])
    const more = withFields && fields && typeof fields === 'object' && !Array.isArray(fields) ? (fields as Record<string, unknown>) : {}
    return { status: 'ok', ...more, latency_ms: round(performance.now() - t0) } as HealthCheck
  } catch (error) {
    return { status: 'down', latency_ms: round(performance.now() - t0), detail: error instanceof Error ? error.message : String(error) }
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000
