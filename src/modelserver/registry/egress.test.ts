import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../engine/createEngine.js'
import type { Engine } from '../engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { RegistryEgress, type HostResolver } from './RegistryEgress.js'

/**
 * Tried as an attacker: a pull or push names its registry, so the model server must not
 * become a proxy into the operator's network. Every server here listens on 127.0.0.1 and names resolve through a
 * stub: no test sends a packet (or a DNS query) anywhere else.
 */

type Hit = { method: string; url: string }
type Loopback = { url: string; port: number; hits: Hit[]; close(): Promise<void> }

const SECRET = 'ami-id\ninstance-secret-7f3a9c'

async function loopbackServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Loopback> {
  const hits: Hit[] = []
  const server: Server = createServer((req, res) => {
    hits.push({ method: req.method ?? '', url: req.url ?? '' })
    answer(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

/** A stub DNS: a fixed table; anything else does not exist. */
function stubResolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = async (host: string) => {
    asked.push(host)
    const found = Object.hasOwn(table, host) ? table[host] : undefined
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return found
  }
  return Object.assign(resolve, { asked })
}

let engine: Engine
let secret: Loopback
let redirector: Loopback
let talkative: Loopback
let redirectTo = ''
let server: TestModelServer
let allowing: TestModelServer
const dns = stubResolver({ 'intranet.test': ['10.0.0.7'], 'metadata.test': ['169.254.169.254'], 'mixed.test': ['8.8.8.8', '192.168.1.1'] })

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  // What an attacker wants to reach: something only the model server's host can see.
  secret = await loopbackServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(SECRET))
  // A registry the operator trusts, made to redirect (as registries do to their blob CDN).
  redirector = await loopbackServer((_req, res) => res.writeHead(302, { location: redirectTo }).end())
  // A registry whose error page carries something it should not.
  talkative = await loopbackServer((_req, res) => res.writeHead(403, { 'content-type': 'text/html' }).end(`<h1>denied</h1>${SECRET}`))
  server = await startTestModelServer({ engine, config: { installDefaults: false }, resolveHost: dns })
  allowing = await startTestModelServer({
    engine,
    config: { registries: [`127.0.0.1:${redirector.port}`, `127.0.0.1:${talkative.port}`, 'intranet.test', 'mixed.test', 'metadata.test'] },
    resolveHost: dns,
  })
})

afterAll(async () => {
  await allowing?.close()
  await server?.close()
  await Promise.all([secret, redirector, talkative].map((s) => s?.close()))
  await engine?.dispose()
})

async function post(base: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, text: await res.text() }
}

function expectNothingLeaked(text: string) {
  expect(text).not.toContain('instance-secret')
  expect(text).not.toContain('ami-id')
  expect(text).not.toMatch(/10\.0\.0\.7|169\.254|192\.168/)
}

describe('model-server egress: only allow-listed registries, redirects only to public https', () => {
  it('pull and push to 127.0.0.1:<port> or localhost:<port> (not allow-listed) are 400 and send nothing', async () => {
    for (const host of [`127.0.0.1:${secret.port}`, `localhost:${secret.port}`]) {
      for (const stream of [false, true]) {
        const pulled = await post(server.url, '/api/pull', { model: `${host}/library/x:latest`, insecure: true, stream })
        expect(pulled.status, host).toBe(400)
        expect(JSON.parse(pulled.text).error).toMatch(/not allowed.*MODELSERVER_REGISTRIES/)
      }
    }
    const target = `127.0.0.1:${secret.port}/library/exfil:latest`
    expect((await post(allowing.url, '/api/copy', { source: 'svc-tiny-chat', destination: target })).status).toBe(200)
    const pushed = await post(allowing.url, '/api/push', { model: target, insecure: true, stream: false })
    expect(pushed.status).toBe(400)
    expect(secret.hits).toEqual([])
  })

  it('an allow-listed name that resolves to a private or link-local address is refused before any connection', async () => {
    for (const host of ['intranet.test', 'metadata.test', 'mixed.test']) {
      const res = await post(allowing.url, '/api/pull', { model: `${host}/library/x:latest`, insecure: true, stream: false })
      expect(res.status, host).toBe(502)
      expect(JSON.parse(res.text).error).toBe('pull model manifest: registry name resolves to a non-public address')
      expectNothingLeaked(res.text)
    }
    expect(dns.asked).toEqual(expect.arrayContaining(['intranet.test', 'metadata.test', 'mixed.test']))
  })

  it('a redirect to http, to a loopback or private literal, or to a name resolving to one is refused and not followed', async () => {
    const targets = [
      `http://127.0.0.1:${secret.port}/latest/meta-data`,
      `https://127.0.0.1:${secret.port}/latest/meta-data`,
      'https://169.254.169.254/latest/meta-data',
      'https://[::ffff:169.254.169.254]/latest/meta-data',
      'https://metadata.test/latest/meta-data',
      'https://localhost/latest/meta-data',
    ]
    for (const target of targets) {
      redirectTo = target
      for (const stream of [false, true]) {
        const res = await post(allowing.url, '/api/pull', { model: `127.0.0.1:${redirector.port}/library/x:latest`, insecure: true, stream })
        expect(res.status, target).toBe(stream ? 200 : 502)
        const error = stream ? JSON.parse(res.text.trimEnd().split('\n').at(-1)!).error : JSON.parse(res.text).error
        expect(error, target).toMatch(/^pull model manifest: redirect refused: /)
        expectNothingLeaked(res.text)
        expect(res.text).not.toContain('meta-data')
      }
    }
    expect(secret.hits).toEqual([])
    expect(redirector.hits.length).toBe(targets.length * 2)
  })

  it("a registry's error body is summarised (status, OCI codes), never echoed", async () => {
    const res = await post(allowing.url, '/api/pull', { model: `127.0.0.1:${talkative.port}/library/x:latest`, insecure: true, stream: false })
    expect(res.status).toBe(502)
    expect(JSON.parse(res.text)).toEqual({ error: 'pull model manifest: registry answered 403' })
    expectNothingLeaked(res.text)
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect([...server.mismatches, ...allowing.mismatches]).toEqual([])
  })
})

describe('RegistryEgress: the redirects it does follow', () => {
  it('follows a GET to https on a public address (a blob CDN) and sends the request there; refuses a PUT redirect', async () => {
    const cdn = await loopbackServer((_req, res) => res.writeHead(200).end('blob bytes'))
    const seen: string[] = []
    // The stub says cdn.test is public; the injected fetch then delivers the https request to the loopback CDN, so
    // nothing leaves this machine.
    const egress = new RegistryEgress({
      allowed: [`127.0.0.1:${redirector.port}`],
      resolve: stubResolver({ 'cdn.test': ['8.8.8.8'] }),
      fetch: async (input, init) => {
        const url = new URL(String(input))
        seen.push(url.href)
        if (url.hostname === 'cdn.test') return fetch(`${cdn.url}${url.pathname}`, init)
        return fetch(url, init)
      },
    })
    redirectTo = 'https://cdn.test/blobs/sha256-abc'
    const res = await egress.send(`${redirector.url}/v2/library/x/blobs/sha256:abc`, {}, 'pull')
    expect(await res.text()).toBe('blob bytes')
    expect(seen).toEqual([`${redirector.url}/v2/library/x/blobs/sha256:abc`, 'https://cdn.test/blobs/sha256-abc'])
    await expect(egress.send(`${redirector.url}/v2/library/x/manifests/latest`, { method: 'PUT', body: 'x' }, 'push manifest')).rejects.toThrow(
      /redirected a PUT; not followed/,
    )
    await cdn.close()
  })
})
