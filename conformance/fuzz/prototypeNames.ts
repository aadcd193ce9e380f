/**
 * The prototype-name probe: every operation of the documents that takes a name — a path, query or top-level
 * body field called like a company, wallet, agent id, agent, model or kind — is sent each Object.prototype
 * member name (and the structured forms an agent id or model name has), with a live session and with the
 * overlord's bearer, and every answer must be a documented non-5xx matching the document. Names used as keys
 * of plain objects answer 500 here (`GET /cabinet/hasOwnProperty` did).
 */
import fc from 'fast-check'
import { Credentials, type Tier } from './Credentials.js'
import { responseProblems } from './fuzz.js'
import { loadOperations, type Operation } from './operations.js'
import { PROTOTYPE_NAMES } from './requestArbitrary.js'
import { schemaArbitrary } from './schemaArbitrary.js'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { Server } from '../types.js'

/** Fields that carry a name a server might use as a key. */
export const NAME_FIELD = /^(co|company|wallet|agent_id|agent|agents|id|model|name|kind|source|destination|namespace|repository|reference)$/

export type ProbeProblem = { server: Server; operation: string; tier: Tier; field: string; value: string; status: number; problem: string; response: string }
export type ProbeReport = { requests: number; routes: string[]; problems: ProbeProblem[] }

function valuesFor(field: string): string[] {
  return PROTOTYPE_NAMES.flatMap((p) => {
    if (field === 'agent_id') return [p, `company:${p}:cabinet:ceo`, `company:Acme:cabinet:${p}`]
    if (field === 'model' || field === 'name' || field === 'source' || field === 'destination') return [p, `${p}:latest`, `library/${p}:latest`]
    return [p]
  })
}

function nameFields(op: Operation): { where: 'path' | 'query' | 'body'; name: string }[] {
  const fields: { where: 'path' | 'query' | 'body'; name: string }[] = []
  for (const p of op.parameters) if ((p.in === 'path' || p.in === 'query') && NAME_FIELD.test(p.name)) fields.push({ where: p.in, name: p.name })
  const json = op.body.get('application/json') as { properties?: Record<string, unknown> } | undefined
  for (const name of Object.keys(json?.properties ?? {})) if (NAME_FIELD.test(name)) fields.push({ where: 'body', name })
  return fields
}

export async function probePrototypeNames(options: { urls: Partial<Record<Server, string>>; overlord?: PrivateKeyAccount; seed?: number; servers?: Server[] }): Promise<ProbeReport> {
  const credentials = new Credentials(options.urls.gateway, options.overlord, options.seed ?? 1)
  const report: ProbeReport = { requests: 0, routes: [], problems: [] }
  for (const server of options.servers ?? (['gateway', 'modelserver'] as const).filter((s) => options.urls[s])) {
    const base = options.urls[server]!.replace(/\/+$/, '')
    for (const op of await loadOperations(server)) {
      const fields = nameFields(op)
      if (fields.length === 0) continue
      report.routes.push(`${server} ${op.method} ${op.path}`)
      const json = op.body.get('application/json')
      const validBody = json ? (fc.sample(schemaArbitrary(json), { seed: options.seed ?? 1, numRuns: 1 })[0] as Record<string, unknown>) : undefined
      for (const field of fields) {
        for (const value of valuesFor(field.name)) {
          for (const tier of ['session', 'bearer'] as const) {
            let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(field.where === 'path' && name === field.name ? value : 'x'))
            if (field.where === 'query') path += `?${new URLSearchParams({ [field.name]: value })}`
            let body: string | undefined
            if (json) {
              const fieldValue = field.name === 'agents' ? [value] : value
              // defineProperty: `__proto__` becomes an own key of the JSON text like any other name
              const object = { ...(validBody && typeof validBody === 'object' ? validBody : {}) }
              if (field.where === 'body') Object.defineProperty(object, field.name, { value: fieldValue, enumerable: true })
              body = JSON.stringify(object)
            }
            const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json' } : {}), ...(await credentials.headers(tier, { path } as never)) }
            const res = await fetch(`${base}${path}`, { method: op.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(60_000) })
            const text = await res.text()
            report.requests++
            const sent = new URL(`${base}${path}`)
            for (const problem of responseProblems(server, op.method, `${sent.pathname}${sent.search}`, res.status, res.headers, text)) {
              report.problems.push({ server, operation: op.id, tier, field: `${field.where}:${field.name}`, value, status: res.status, problem, response: text.slice(0, 300) })
            }
          }
        }
      }
    }
  }
  return report
}
