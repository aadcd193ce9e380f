import { BlockList, isIP } from 'node:net'
import os from 'node:os'
import cors from 'cors'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { ModelServerError } from '../errors.js'
import type { OriginMatcher } from './corsOrigins.js'

/** Request headers a cross-origin page may send (Ollama's list: its own, plus what the openai SDKs send). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'User-Agent',
  'Accept',
  'X-Requested-With',
  'OpenAI-Beta',
  'x-stainless-arch',
  'x-stainless-async',
  'x-stainless-custom-poll-interval',
  'x-stainless-helper-method',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-poll-helper',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
]

export type BrowserGuardOptions = {
  origins: OriginMatcher
  /** The address the server listens on (kept for the log; the Host check now applies on every bind). */
  listenHost: string
  /**
   * Host names (port dropped) accepted besides this machine's (`MODELSERVER_ALLOWED_HOSTS`): the names clients use
   * for a server bound to a public interface, e.g. `llm.example.com`.
   */
  allowedHosts?: ReadonlyArray<string>
}

/** The refusal of a page's origin or a Host name: `forbidden`, answered with no body whatever the route (as Ollama). */
function forbidden(reason: string): ModelServerError {
  return new ModelServerError('forbidden', reason, { answer: { empty: true }, stackless: true })
}

/**
 * What Ollama does for browsers, before any route:
 * - CORS: a request whose `Origin` is neither its own host nor an allowed origin gets 403 (so a web page cannot
 *   make a "simple" cross-site POST — this server reads JSON whatever the Content-Type — and have it run);
 *   allowed origins get the CORS headers, and their preflights 204 (methods, `CORS_ALLOWED_HEADERS`, max age 12 h).
 * - DNS rebinding: on every bind (Ollama checks only on loopback), a `Host` that is not an IP of this
 *   machine or of a private network, `localhost`, this machine's hostname, a `.localhost`/`.local`/`.internal`
 *   name or one of `allowedHosts` gets 403 (a page on `evil.example` rebound to the server's address sends
 *   `Host: evil.example` and its own origin — on `0.0.0.0` as much as on 127.0.0.1).
 */
export function createBrowserGuard(options: BrowserGuardOptions): RequestHandler {
  const { origins } = options
  const headers = cors({
    origin: origins.allowAll ? '*' : true,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    maxAge: 12 * 3600,
    optionsSuccessStatus: 204,
  })
  const extraHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase().replace(/:[0-9]+$/, '')))
  // The refused request's body is drained so its connection stays usable (a kept-alive socket is not cut short);
  // the refusal goes to the list's on-error.
  const forbid = (req: Request, next: NextFunction, reason: string) => {
    req.resume()
    next(forbidden(reason))
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const host = String(req.headers.host ?? '')
    const origin = req.headers.origin
    const sameOrigin = origin === `http://${host}` || origin === `https://${host}`
    if (origin && !sameOrigin && !origins.matches(origin)) return forbid(req, next, 'origin not allowed')
    const afterCors = () => {
      if (!allowedHost(host) && !extraHosts.has(hostName(host))) return forbid(req, next, 'host not allowed')
      if (req.method === 'OPTIONS' && (!origin || sameOrigin)) return void res.status(204).end()
      next()
    }
    if (!origin || sameOrigin) return afterCors()
    headers(req, res, afterCors)
  }
}

/** The Host header's name, port dropped, brackets of an IPv6 literal removed. */
function hostName(hostHeader: string): string {
  const host = hostHeader.toLowerCase()
  const bracketed = /^\[([^\]]+)\](?::[0-9]*)?$/.exec(host)
  if (bracketed) return bracketed[1]!
  return host.split(':').length === 2 ? host.slice(0, host.indexOf(':')) : host
}

/** Loopback, private (RFC 1918, fc00::/7) and unspecified addresses, as Go's netip classifies them. */
const localRanges = new BlockList()
localRanges.addSubnet('127.0.0.0', 8, 'ipv4')
localRanges.addSubnet('10.0.0.0', 8, 'ipv4')
localRanges.addSubnet('172.16.0.0', 12, 'ipv4')
localRanges.addSubnet('192.168.0.0', 16, 'ipv4')
localRanges.addAddress('0.0.0.0', 'ipv4')
localRanges.addAddress('::1', 'ipv6')
localRanges.addAddress('::', 'ipv6')
localRanges.addSubnet('fc00::', 7, 'ipv6')

/** Ollama's allowedHostsMiddleware rule for the Host header (port dropped). */
export function allowedHost(hostHeader: string): boolean {
  let host = hostHeader.toLowerCase()
  const bracketed = /^\[([^\]]+)\](?::[0-9]*)?$/.exec(host)
  if (bracketed) host = bracketed[1]!
  else if (host.split(':').length === 2) host = host.slice(0, host.indexOf(':'))
  const family = isIP(host)
  if (family !== 0) {
    const type = family === 6 ? 'ipv6' : 'ipv4'
    if (localRanges.check(host, type)) return true
    return Object.values(os.networkInterfaces()).some((list) => (list ?? []).some((a) => a.address.toLowerCase() === host))
  }
  if (host === '' || host === 'localhost' || host === os.hostname().toLowerCase()) return true
  return ['.localhost', '.local', '.internal'].some((tld) => host.endsWith(tld))
}
