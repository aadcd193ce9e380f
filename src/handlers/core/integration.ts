import { summarizeEvent } from '../../catalogue/Catalogue.js'
import { eventVisibleTo } from '../../catalogue/eventVisibleTo.js'
import { checkHealth } from '../../health/checkHealth.js'
import { parseReadinessRequirement, UnknownCapabilityError } from '../../health/parseReadinessRequirement.js'
import type { Handler } from '../types.js'
import { requireCaller } from './session.js'

const started = Date.now()

export const getHealth: Handler = (ctx) => ({
  status: 200,
  body: { status: 'ok', version: ctx.services.config.version, uptime_s: Math.floor((Date.now() - started) / 1000) },
})

/** Liveness for probes: the same answer as `GET /health`, also while the replica drains. */
export const getHealthLive: Handler = getHealth

/**
 * Readiness for the balancer: 200 `ready`, or 503 with why (`Readiness`, src/health/Readiness.ts), each capability's
 * status beside it. `require` narrows which capabilities must be up (`none`: the replica's own phase only).
 */
export const getHealthReady: Handler = (ctx) => {
  const { readiness } = ctx.services
  const requirement = parseReadinessRequirement(ctx.query.require as string | undefined, readiness.capabilityNames)
  if (typeof requirement === 'object' && 'unknown' in requirement) {
    throw new UnknownCapabilityError(requirement.unknown, readiness.capabilityNames)
  }
  const report = readiness.report(requirement)
  return { status: report.status === 'ready' ? 200 : 503, body: report, headers: { 'Cache-Control': 'no-store' } }
}

export const getHealthDetailed: Handler = async (ctx) => {
  const { db, modelServer, catalogue, healthChecks } = ctx.services
  return { status: 200, body: await checkHealth({ db, modelServer, catalogue, signal: ctx.signal, extra: healthChecks }) }
}

/** Events read to fill one wallet's page when most of the log is about others. */
const WALLET_SCAN = 2000

export const getRecentCatalogueEvents: Handler = async (ctx) => {
  const kind = ctx.query.kind as string | undefined
  const limit = (ctx.query.limit as number | undefined) ?? 50
  const human = ctx.query.h === true
  const caller = requireCaller(ctx)
  // The overlord bearer reads every event; a wallet reads those about itself and those that name no one.
  const events =
    caller.tier === 'overlord'
      ? await ctx.services.catalogue.recent({ kind, limit })
      : (await ctx.services.catalogue.recent({ kind, limit: Math.max(limit, WALLET_SCAN) })).filter((e) => eventVisibleTo(e, caller.wallet)).slice(0, limit)
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
