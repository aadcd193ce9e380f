/**
 * The test hooks port: off by default, refused in production (the process does not start), token-protected and
 * closed to browsers; over the gateway main.ts builds, its hooks move the clock the gateway's nonces expire by,
 * restart the gateway with other settings (the vault sealed again), and fail a peer through its fault proxy.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../../scripts/nodeArgsFor.js'
import { testOverlord } from '../../tests/support/shadowFixtures.js'
import { createApp } from '../app.js'
import { ConfigError } from '../config/ConfigError.js'
import type { Env } from '../config/env.js'
import { loadConfig } from '../config/loadConfig.js'
import { createGatewayServer } from '../createGatewayServer.js'
import { createLogger } from '../shared/logger.js'
import { FaultProxy } from './FaultProxy.js'
import { prepareTestHooks, type ServedWithHooks } from './prepareTestHooks.js'
import { readTestHooksConfig } from './readTestHooksConfig.js'

const TOKEN = randomBytes(32).toString('hex')
/** The token with its last character changed (a fixed replacement would equal it once in sixteen runs). */
const wrongLastCharacter = (token: string) => `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`

describe('readTestHooksConfig', () => {
  it('is off unless SERVICE_TEST_HOOKS=1', () => {
    expect(readTestHooksConfig({})).toBeUndefined()
    expect(readTestHooksConfig({ SERVICE_TEST_HOOKS: '0', SERVICE_TEST_HOOKS__TOKEN: TOKEN })).toBeUndefined()
    expect(readTestHooksConfig({ SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: TOKEN, SERVICE_TEST_HOOKS__PORT: '8407' })).toEqual({ port: 8407, token: TOKEN })
  })

  it('refuses NODE_ENV=production, a missing token and a weak one, naming the setting', () => {
    const refusal = (env: Env) => {
      try {
        readTestHooksConfig(env)
      } catch (error) {
        return error instanceof ConfigError ? error.message : `not a ConfigError: ${String(error)}`
      }
      return 'accepted'
    }
    expect(refusal({ SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: TOKEN, NODE_ENV: 'production' })).toMatch(/SERVICE_TEST_HOOKS is refused when NODE_ENV=production/)
    expect(refusal({ SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: TOKEN, NODE_ENV: 'Production ' })).toMatch(/refused/)
    expect(refusal({ SERVICE_TEST_HOOKS: '1' })).toMatch(/SERVICE_TEST_HOOKS__TOKEN is required/)
    expect(refusal({ SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: 'secret' })).toMatch(/SERVICE_TEST_HOOKS__TOKEN is too short/)
    expect(refusal({ SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: 'ab'.repeat(32) })).toMatch(/SERVICE_TEST_HOOKS__TOKEN repeats/)
  })

  it('the gateway process does not start with the hooks in production', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hooks-prod-'))
    try {
      const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
        cwd: join(import.meta.dirname, '..', '..'),
        env: { ...process.env, NODE_ENV: 'production', SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__TOKEN: TOKEN, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()))
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()))
      // a gateway that started anyway is stopped, never left running
      const timer = setTimeout(() => child.kill('SIGKILL'), 45_000)
      const [code] = (await once(child, 'close')) as [number | null]
      clearTimeout(timer)
      expect(code).toBe(1)
      expect(output).toMatch(/SERVICE_TEST_HOOKS is refused when NODE_ENV=production/)
      expect(output).not.toMatch(/listening/)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('FaultProxy', () => {
  let peer: Server
  let proxy: FaultProxy
  beforeAll(async () => {
    peer = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json', 'x-peer': 'yes' })
        res.end(JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, body: Buffer.concat(chunks).toString() }))
      })
    })
    peer.listen(0, '127.0.0.1')
    await once(peer, 'listening')
    proxy = new FaultProxy(new URL(`http://127.0.0.1:${(peer.address() as AddressInfo).port}/base`))
    await proxy.listen()
  })
  afterAll(async () => {
    await proxy?.close()
    peer?.close()
  })

  it('forwards method, path under the target, body, status and headers unchanged', async () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/base$/)
    const res = await fetch(`${proxy.url}/tx?x=1`, { method: 'POST', body: 'bytes' })
    expect(res.status).toBe(201)
    expect(res.headers.get('x-peer')).toBe('yes')
    expect(await res.json()).toEqual({ method: 'POST', url: '/base/tx?x=1', host: `127.0.0.1:${(peer.address() as AddressInfo).port}`, body: 'bytes' })
  })

  it('an armed fault answers in the peer’s place — only under its path, only `times` times — then passes again', async () => {
    proxy.arm({ kind: 'status', status: 503, path: '/tx', times: 2 })
    expect((await fetch(`${proxy.url}/v1/info`)).status).toBe(201)
    expect((await fetch(`${proxy.url}/tx`, { method: 'POST', body: 'a' })).status).toBe(503)
    expect(proxy.fault).toMatchObject({ status: 503, times: 1 })
    expect((await fetch(`${proxy.url}/tx`, { method: 'POST', body: 'a' })).status).toBe(503)
    expect((await fetch(`${proxy.url}/tx`, { method: 'POST', body: 'a' })).status).toBe(201)
    proxy.arm({ kind: 'reset' })
    await expect(fetch(`${proxy.url}/anything`)).rejects.toThrow(/fetch failed/)
    proxy.clear()
    expect((await fetch(`${proxy.url}/anything`)).status).toBe(201)
  })
})

describe('the hooks port over the gateway main.ts builds', () => {
  const overlord = testOverlord()
  let dataDir: string
  let peer: Server
  let served: ServedWithHooks
  let server: Server
  let url: string
  let now: () => number
  const hook = (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
    fetch(`${served.url}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'hooks-gw-'))
    peer = createServer((_req, res) => res.end('{"ok":true}'))
    peer.listen(0, '127.0.0.1')
    await once(peer, 'listening')
    const env: Env = {
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
      SERVICE_RATE_LIMIT__MAX: '100000',
      SERVICE_LLM__MODELSERVER__BASE_URL: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`,
      SHADOW_OVERLORD_ADDRESS: overlord.account.address,
      SHADOW_JWT_SECRET: overlord.jwtSecretHex,
      LOG_LEVEL: 'error',
      SERVICE_TEST_HOOKS: '1',
      SERVICE_TEST_HOOKS__TOKEN: TOKEN,
    }
    const hooks = (await prepareTestHooks(env))!
    now = hooks.now
    const logger = createLogger({ name: 'gateway-hooks-test', level: 'error' })
    const build = (e: Env) => createApp({ config: loadConfig(e), env: e, logger, now: hooks.now, responseValidation: 'error' })
    served = await hooks.serve(await build(hooks.env), build, logger)
    server = createGatewayServer(served.app, loadConfig(hooks.env).http).listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }, 60_000)
  afterAll(async () => {
    server?.closeAllConnections()
    server?.close()
    await served?.close()
    await served?.current().close()
    peer?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('listens on loopback only and answers nobody without the token, nor any browser', async () => {
    expect(new URL(served.url).hostname).toBe('127.0.0.1')
    expect((await hook('GET', '/', undefined, {})).status).toBe(401)
    expect((await hook('GET', '/', undefined, { authorization: `Bearer ${wrongLastCharacter(TOKEN)}` })).status).toBe(401)
    expect((await hook('GET', '/', undefined, { authorization: TOKEN })).status).toBe(401)
    expect((await hook('POST', '/clock', { seconds: 3600 }, { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' })).status).toBe(403)
    expect((await hook('OPTIONS', '/clock', undefined, { origin: 'http://evil.example', 'access-control-request-method': 'POST' })).headers.get('access-control-allow-origin')).toBeNull()
    const described = (await (await hook('GET', '/')).json()) as { hooks: string[]; peers: Record<string, { target: string }> }
    expect(described.hooks).toEqual(['clock', 'restart', 'proof_file', 'faults'])
    expect(described.peers.SERVICE_LLM__MODELSERVER__BASE_URL!.target).toBe(`http://127.0.0.1:${(peer.address() as AddressInfo).port}`)
  })

  it('POST /clock moves the gateway’s clock: a challenge issued now is expired 121 s later', async () => {
    const issued = (await (await fetch(`${url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"scope":"auth"}' })).json()) as { nonce: string; message: string }
    const before = now()
    expect((await hook('POST', '/clock', { seconds: 121 })).status).toBe(200)
    expect(now() - before).toBeGreaterThanOrEqual(121)
    const verify = await fetch(`${url}/admin/shadow/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nonce: issued.nonce, signature: await overlord.account.signMessage({ message: issued.message }) }),
    })
    expect(verify.status).toBe(410)
    expect(((await verify.json()) as { error: string }).error).toBe('nonce_expired')
    expect((await hook('POST', '/clock', { seconds: 1.5 })).status).toBe(400)
  })

  it('POST /restart rebuilds the gateway with the settings given, on the same port; unknown settings shapes are refused', async () => {
    const first = served.current()
    expect((await hook('POST', '/restart', { env: { SHADOW_OVERLORD_ADDRESS: '' } })).status).toBe(200)
    expect(served.current()).not.toBe(first)
    const off = await fetch(`${url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"scope":"auth"}' })
    expect(off.status).toBe(503)
    expect((await hook('POST', '/restart', {})).status).toBe(200)
    expect((await fetch(`${url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"scope":"auth"}' })).status).toBe(200)
    expect((await hook('POST', '/restart', { env: { 'bad name': 'x' } })).status).toBe(400)
  }, 60_000)

  it('a restart that cannot start answers 400 and leaves the gateway running with its start settings', async () => {
    const res = await hook('POST', '/restart', { env: { SHADOW_JWT_SECRET: 'short' } })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('restart_failed')
    expect((await fetch(`${url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"scope":"auth"}' })).status).toBe(200)
  }, 60_000)

  it('PUT /faults/peers/{setting} fails the gateway’s calls to that peer until DELETE; an unknown peer is 404', async () => {
    const peerPath = '/faults/peers/SERVICE_LLM__MODELSERVER__BASE_URL'
    expect((await hook('PUT', peerPath, { status: 500 })).status).toBe(204)
    const through = (await (await hook('GET', '/')).json()) as { peers: Record<string, { target: string }> }
    const proxied = served.current().services.config.modelServer.baseUrl
    expect(proxied).not.toBe(through.peers.SERVICE_LLM__MODELSERVER__BASE_URL!.target)
    expect((await fetch(`${proxied}/api/tags`)).status).toBe(500)
    expect((await hook('DELETE', peerPath)).status).toBe(204)
    expect((await fetch(`${proxied}/api/tags`)).status).toBe(200)
    expect((await hook('PUT', '/faults/peers/NOPE', { status: 500 })).status).toBe(404)
    expect((await hook('PUT', peerPath, { status: 200 })).status).toBe(400)
  })
})
