/**
 * Requests the fuzzer sends once per path or operation, besides the drawn ones:
 * - unsupported_method: every method a documented path does not have (of GET, PUT, POST, DELETE, PATCH), sent
 *   with a live session so that the gateway's arrival gate lets it reach the router — answered 405 with an
 *   `Allow` header naming every documented method (HEAD goes with GET);
 * - missing_required_header: an otherwise valid request to an operation with a required header parameter,
 *   without that header — answered 4xx.
 */
import fc from 'fast-check'
import { documentRouter } from '../DocumentClient.js'
import type { Server } from '../types.js'
import type { CheckResult } from './checks.js'
import type { Tier } from './fuzz.js'
import type { Operation } from './operations.js'
import { type FuzzRequest, validRequestArbitrary } from './requestArbitrary.js'

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const

export type Probe = {
  check: 'unsupported_method' | 'missing_required_header'
  server: Server
  /** The operation the probe concerns (unsupported_method: the first of the path, for the report). */
  op: Operation
  tier: Tier
  request: FuzzRequest
  /** unsupported_method: the methods the path documents. */
  allowed?: string[]
  /** missing_required_header: the header left out. */
  header?: string
}

export function probes(operations: Operation[], seed: number): Probe[] {
  const out: Probe[] = []
  const byPath = new Map<string, Operation[]>()
  for (const op of operations) byPath.set(`${op.server} ${op.path}`, [...(byPath.get(`${op.server} ${op.path}`) ?? []), op])
  for (const ops of byPath.values()) {
    const first = ops[0]!
    const documented = new Set(ops.map((o) => o.method))
    const valid = fc.sample(validRequestArbitrary(first), { seed, numRuns: 1 })[0]!
    const path = valid.path.split('?')[0]!
    for (const method of METHODS) {
      if (documented.has(method) || (method === 'GET' && documented.has('HEAD'))) continue
      // the concrete path may match another path's template that has the method (`/v2/a/b/blobs/uploads`, a blob)
      if (documentRouter(first.server).matchOperation(method, path)) continue
      out.push({ check: 'unsupported_method', server: first.server, op: first, tier: 'session', request: { operation: first.id, mutation: 'valid', method, path, headers: {} }, allowed: [...documented] })
    }
  }
  for (const op of operations) {
    for (const header of op.parameters.filter((p) => p.in === 'header' && p.required)) {
      const valid = fc.sample(validRequestArbitrary(op), { seed, numRuns: 1 })[0]!
      const headers = Object.fromEntries(Object.entries(valid.headers).filter(([name]) => name.toLowerCase() !== header.name.toLowerCase()))
      const tier: Tier = op.security.length === 0 || op.security.some((alternative) => alternative.length === 0) ? 'none' : 'session'
      out.push({ check: 'missing_required_header', server: op.server, op, tier, request: { ...valid, headers, mutation: 'missing-required' }, header: header.name })
    }
  }
  return out
}

export function probeCheck(probe: Pick<Probe, 'check' | 'allowed' | 'header'> & { request: Pick<FuzzRequest, 'method' | 'path'> }, status: number, headers: Headers): CheckResult {
  if (probe.check === 'missing_required_header') {
    return status >= 400 && status < 500 ? { check: probe.check } : { check: probe.check, problem: `answered ${status} without the required header ${probe.header}` }
  }
  if (status !== 405) return { check: probe.check, problem: `answered ${status} to ${probe.request.method}, which ${probe.request.path} does not document (expected 405)` }
  const allow = (headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase()).filter(Boolean)
  const missing = (probe.allowed ?? []).filter((m) => !allow.includes(m))
  if (allow.length === 0) return { check: probe.check, problem: '405 without an Allow header' }
  if (missing.length) return { check: probe.check, problem: `405 with Allow: ${allow.join(', ')} — the documented ${missing.join(', ')} missing` }
  if (allow.includes(probe.request.method)) return { check: probe.check, problem: `405 whose Allow names the refused ${probe.request.method}` }
  return { check: probe.check }
}
