import { timingSafeEqual } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import type { Env } from '../config/env.js'
import { readShadowConfig } from '../shadow/config.js'
import type { Logger } from '../shared/logger.js'
import { writeFileAtomic } from '../vault/writeFileAtomic.js'
import type { ArmedFault } from './FaultProxy.js'
import type { Peer } from './interposePeers.js'
import type { RestartableGateway } from './RestartableGateway.js'

export type HooksServerParameters = {
  port: number
  token: string
  env: Env
  gateway: RestartableGateway
  peers: Map<string, Peer>
  clock: { offsetS: number }
  logger: Logger
}

class HookError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const MAX_BODY = 64 * 1024
const SETTING = /^[A-Z][A-Z0-9_]*$/

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY) {
        reject(new HookError(413, 'body_too_large', `at most ${MAX_BODY} bytes`))
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim()
      if (text === '') return resolveBody({})
      try {
        const value = JSON.parse(text) as unknown
        if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error()
        resolveBody(value as Record<string, unknown>)
      } catch {
        reject(new HookError(400, 'invalid_json', 'the body must be a JSON object'))
      }
    })
    req.on('error', reject)
  })
}

const integer = (value: unknown, name: string, min: number, max: number): number => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new HookError(400, 'invalid_request', `${name} must be an integer from ${min} to ${max}`)
  return value
}

/** The peer fault a request asks for: `{status}` (an answer of the peer) or `{reset: true}`, with `times` and `path`. */
function faultOf(body: Record<string, unknown>): ArmedFault {
  const times = body.times === undefined ? undefined : integer(body.times, 'times', 1, 1_000_000)
  if (body.path !== undefined && !(typeof body.path === 'string' && body.path.startsWith('/'))) throw new HookError(400, 'invalid_request', 'path must start with /')
  const path = body.path as string | undefined
  if (body.reset === true) return { kind: 'reset', times, path }
  const status = integer(body.status ?? 503, 'status', 400, 599)
  return { kind: 'status', status, times, path, ...(typeof body.body === 'string' ? { body: body.body.slice(0, 4096) } : {}) }
}

/**
 * The hooks port: loopback only, every request with the bearer token, no browser (a request with an `Origin` is
 * refused, and no preflight is ever answered). JSON in and out:
 *   GET  /                         what this deployment's hooks can do: hooks, peers (by setting) and armed faults
 *   POST /clock {seconds}          moves the gateway's clock (nonces, bearers, quotes expire by it)
 *   POST /restart {env?}           restarts the gateway with these settings over its start environment
 *   PUT|DELETE /proof-file         writes `{address, signature, message}` to / removes flow A's unlock proof file
 *   PUT|DELETE /faults/cabinet-step {at}
 *                                  the `at`-th cabinet provisioning step from now fails (0 = the next one)
 *   PUT|DELETE /faults/peers/{setting} {status?|reset?, times?, path?}
 *                                  requests to that peer fail: the peer answers `status` (default 503) or the
 *                                  connection is reset, `times` requests or until cleared, only under `path`
 */
export async function startHooksServer(p: HooksServerParameters): Promise<{ url: string; close: () => Promise<void> }> {
  const expected = Buffer.from(`Bearer ${p.token}`)
  const authorised = (req: IncomingMessage) => {
    const given = Buffer.from(req.headers.authorization ?? '')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
  const describe = () => ({
    hooks: ['clock', 'restart', 'proof_file', 'faults'],
    clock: { offset_s: p.clock.offsetS, now: Math.floor(Date.now() / 1000) + p.clock.offsetS },
    faults: { cabinet_step: p.gateway.current().services.shadow.cabinets.faults !== undefined },
    peers: Object.fromEntries([...p.peers].map(([name, peer]) => [name, { setting: peer.setting, target: peer.target, fault: peer.proxy.fault ?? null, failed: peer.proxy.failed }])),
  })
  const proofPath = () => resolve(readShadowConfig(p.env).unlockProofPath)

  const route = async (req: IncomingMessage): Promise<{ status: number; body?: unknown }> => {
    const path = new URL(req.url ?? '/', 'http://hooks').pathname
    const method = req.method ?? 'GET'
    const body = method === 'PUT' || method === 'POST' ? await readJson(req) : {}
    if (path === '/' && method === 'GET') return { status: 200, body: describe() }
    if (path === '/clock' && method === 'POST') {
      p.clock.offsetS += integer(body.seconds, 'seconds', -1_000_000_000, 1_000_000_000)
      return { status: 200, body: describe().clock }
    }
    if (path === '/restart' && method === 'POST') {
      const env = (body.env ?? {}) as Record<string, unknown>
      if (typeof env !== 'object' || Array.isArray(env)) throw new HookError(400, 'invalid_request', 'env must be an object of settings')
      for (const [name, value] of Object.entries(env)) if (!SETTING.test(name) || typeof value !== 'string') throw new HookError(400, 'invalid_request', `env.${name} must be a setting name with a string value`)
      const started = Date.now()
      try {
        await p.gateway.restart(env as Record<string, string>)
      } catch (error) {
        throw new HookError(400, 'restart_failed', `the gateway did not start with these settings (${(error as Error).message}); it runs with its start environment`)
      }
      p.logger.warn({ settings: Object.keys(env) }, 'test hooks: gateway restarted')
      return { status: 200, body: { restarted: true, ms: Date.now() - started } }
    }
    if (path === '/proof-file' && method === 'PUT') {
      for (const field of ['address', 'signature', 'message']) if (typeof body[field] !== 'string') throw new HookError(400, 'invalid_request', `${field} must be a string`)
      await writeFileAtomic(proofPath(), `${JSON.stringify({ address: body.address, signature: body.signature, message: body.message })}\n`, 0o600)
      return { status: 204 }
    }
    if (path === '/proof-file' && method === 'DELETE') {
      await rm(proofPath(), { force: true })
      return { status: 204 }
    }
    if (path === '/faults/cabinet-step' && (method === 'PUT' || method === 'DELETE')) {
      const cabinets = p.gateway.current().services.shadow.cabinets
      if (method === 'DELETE') cabinets.faults = undefined
      else {
        const at = integer(body.at, 'at', 0, 10_000)
        let step = 0
        cabinets.faults = (name) => {
          if (step++ === at) throw new Error(`fault injected by the test hooks at cabinet step ${at} (${name})`)
        }
      }
      return { status: 204 }
    }
    const peerPath = /^\/faults\/peers\/([^/]+)$/.exec(path)
    if (peerPath && (method === 'PUT' || method === 'DELETE')) {
      const name = decodeURIComponent(peerPath[1]!)
      const peer = p.peers.get(name)
      if (!peer) throw new HookError(404, 'unknown_peer', `no peer ${name}; peers: ${[...p.peers.keys()].join(', ') || 'none'}`)
      if (method === 'DELETE') peer.proxy.clear()
      else peer.proxy.arm(faultOf(body))
      return { status: 204 }
    }
    throw new HookError(404, 'not_found', `no hook ${method} ${path}`)
  }

  const answer = (res: ServerResponse, status: number, body?: unknown) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    res.writeHead(status, { ...(text ? { 'content-type': 'application/json' } : {}), 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
    res.end(text)
  }
  const server: Server = createServer((req, res) => {
    if (req.headers.origin !== undefined) return answer(res, 403, { error: 'forbidden', message: 'the test hooks answer no browser' })
    if (!authorised(req)) return answer(res, 401, { error: 'unauthorized', message: 'Authorization: Bearer <SERVICE_TEST_HOOKS__TOKEN> required' })
    route(req).then(
      (r) => answer(res, r.status, r.body),
      (error: unknown) => {
        if (error instanceof HookError) return answer(res, error.status, { error: error.code, message: error.message })
        p.logger.error({ err: error }, 'test hooks: a hook failed')
        answer(res, 500, { error: 'hook_failed', message: 'the hook failed; see the gateway log' })
      },
    )
  })
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(p.port, '127.0.0.1', () => resolveListen())
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
