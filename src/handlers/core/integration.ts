import { summarizeEvent } from '../../catalogue/Catalogue.js'
import type { Handler } from '../types.js'

const started = Date.now()

export const getHealth: Handler = (ctx) => ({
  status: 200,
  body: { status: 'ok', version: ctx.services.config.version, uptime_s: Math.floor((Date.now() - started) / 1000) },
})

async function timed(check: () => Promise<unknown>, timeoutMs: number) {
  const t0 = performance.now()
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref()),
    ])
    return { status: 'ok' as const, latency_ms: round(performance.now() - t0) }
  } catch (error) {
    return { status: 'down' as const, latency_ms: round(performance.now() - t0), detail: error instanceof Error ? error.message : String(error) }
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000

export const getHealthDetailed: Handler = async (ctx) => {
  const { db, modelServer, catalogue } = ctx.services
  const [database, modelserver, catalogue_log] = await Promise.all([
    timed(() => db.selectFrom('catalogue_events').select('event_id').limit(1).execute(), 2000),
    timed(() => modelServer.version(ctx.signal), 2000),
    timed(() => catalogue.checkWritable(), 2000),
  ])
  const checks = { database, modelserver, catalogue_log }
  const status = Object.values(checks).every((c) => c.status === 'ok') ? 'ok' : 'degraded'
  return { status: 200, body: { status, checks } }
}

export const getRecentCatalogueEvents: Handler = async (ctx) => {
  const kind = ctx.query.kind as string | undefined
  const limit = (ctx.query.limit as number | undefined) ?? 50
  const human = ctx.query.h === true
  const events = await ctx.services.catalogue.recent({ kind, limit })
  return {
    status: 200,
    body: {
      events: human ? events.map((e) => ({ ...e, summary: summarizeEvent(e), at_iso: new Date(e.at * 1000).toISOString() })) : events,
    },
  }
}

export const listAgents: Handler = async (ctx) => ({ status: 200, body: { agents: await ctx.services.marketplace.listAgents() } })

export const getAgent: Handler = async (ctx) => ({ status: 200, body: await ctx.services.marketplace.getAgent(ctx.params.id!) })

export const getInboundMetrics: Handler = (ctx) => ({ status: 200, body: ctx.services.inbound.snapshot() })

export const listModelServerModels: Handler = async (ctx) => ({ status: 200, body: await ctx.services.modelServer.installedModels(ctx.signal) })

export const getMetrics: Handler = async (ctx) => ({
  status: 200,
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  body: await ctx.services.metricsText(),
})
