import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { unlockMessageFor } from './vault/Vault.js'
import { startFakeModelServer, type FakeModelServer } from '../tests/support/fakeModelServer.js'
import { hostileFromValues } from '../tests/support/hostileFromValues.js'
import { startTestGateway, type TestGateway } from '../tests/support/startTestGateway.js'

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
const JSON_BODY = { 'content-type': 'application/json' }
const overlord = privateKeyToAccount(generatePrivateKey())

let gw: TestGateway
let model: FakeModelServer
const alice = privateKeyToAccount(generatePrivateKey())
let token: string

beforeAll(async () => {
  model = await startFakeModelServer()
  gw = await startTestGateway({
    modelServerUrl: model.url,
    env: { SHADOW_OVERLORD_ADDRESS: overlord.address, SHADOW_JWT_SECRET: randomBytes(32).toString('hex'), SERVICE_QUOTA__COST_CALLS_PER_DAY: '3' },
  })
  token = await gw.login(alice)
})

afterAll(async () => {
  await gw?.close()
  await model?.close()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { headers, redirect: 'manual' })
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...JSON_BODY, ...headers }, body: JSON.stringify(body), redirect: 'manual' })
const session = () => ({ 'x-session-token': token })
const rawGet = (path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
    const req = request(`${gw.url}${path}`, { headers }, (res) => {
      res.resume()
      resolve({ status: res.statusCode ?? 0, location: res.headers.location })
    })
    req.on('error', reject)
    req.end()
  })

describe('arrival gate (seed 000 §4.1)', () => {
  it('rule 1: CORS runs first — a preflight on a gated path is answered, never redirected', async () => {
    const res = await fetch(`${gw.url}/journal`, {
      method: 'OPTIONS',
      headers: { origin: 'http://gw.test', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-session-token', ...HTML },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('http://gw.test')
    expect(res.headers.get('access-control-allow-headers')).toMatch(/X-Session-Token/i)
    expect(res.headers.get('location')).toBeNull()
  })

  it('rule 2: public exact paths and prefixes proceed without a session', async () => {
    for (const path of ['/login', '/public', '/docs.html', '/doc/', '/autocore', '/shadow-overlord', '/cabinet', '/cabinet.html']) {
      const res = await get(path, HTML)
      expect(res.status, path).toBe(200)
    }
    expect((await get('/doc/openapi/gateway.yaml')).status).toBe(200)
    expect((await get('/static/swagger-ui/swagger-ui.css')).status).toBe(200)
    // Public prefixes without an operation: a plain 404, never the gate.
    for (const path of ['/autocore/deep/page', '/static/missing.js', '/css/site.css', '/js/app.js', '/img/logo.png', '/favicon.ico', '/cms-json/callback', '/admin/shadow/unknown', '/doc/missing']) {
      const res = await get(path, HTML)
      expect(res.status, path).toBe(404)
    }
    expect((await post('/users/challenge', { wallet: alice.address })).status).toBe(200)
    expect((await get(`/users/${alice.address}/permissions`)).status).toBe(200)
    expect((await get('/users/session/validate', session())).status).toBe(200)
  })

  it('rule 3: a valid session proceeds (header; cookie only on GET page navigations)', async () => {
    expect((await get('/journal', session())).status).toBe(200)
    expect((await get('/journal', { cookie: `svc_session=${token}`, ...HTML })).status).toBe(200)
    const viaCookiePost = await post('/llm/completion', { prompt: 'x' }, { cookie: `svc_session=${token}` })
    expect(viaCookiePost.status).toBe(401)
    const bogus = await get('/journal', { 'x-session-token': `st_${'A'.repeat(43)}` })
    expect(bogus.status).toBe(401)
  })

  it('rule 4: an HTML request without a session is redirected to the login page with the path', async () => {
    const res = await get('/journal', HTML)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/login?from=%2Fjournal')
    // fetch() cannot send Sec-Fetch-Mode itself; a raw request can, as a browser does on navigation.
    const navigate = await rawGet('/storage/?view=recent', { 'sec-fetch-mode': 'navigate', accept: '*/*' })
    expect(navigate.status).toBe(302)
    expect(navigate.location).toBe(`/login?from=${encodeURIComponent('/storage/?view=recent')}`)
    // Gated paths without an operation are gated as well (no probing for what exists).
    const unknown = await get('/secret/thing', HTML)
    expect(unknown.status).toBe(302)
  })

  it('rule 5: any other request without a session gets 401 {code: auth_required, from}', async () => {
    const res = await get('/journal', { accept: 'application/json' })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ code: 'auth_required', from: '/journal' })
    const api = await get('/health/detailed')
    expect(await api.json()).toEqual({ code: 'auth_required', from: '/health/detailed' })
    const unknown = await get('/secret/thing')
    expect(unknown.status).toBe(401)
    // The gate answers before the body is read or validated.
    const malformed = await fetch(`${gw.url}/llm/chat`, { method: 'POST', headers: JSON_BODY, body: '{oops' })
    expect(malformed.status).toBe(401)
  })

  it('rule 6: SERVICE_HARD_GATE_ENABLED is read on every request; 0 opens the pre-rollout list only', async () => {
    try {
      gw.env.SERVICE_HARD_GATE_ENABLED = '0'
      for (const path of ['/journal', '/health', '/health/detailed', '/agents', '/insight/', '/registry/', '/storage/', '/coreterm/', '/feedback.txt', '/docs', '/metrics', '/public']) {
        expect((await get(path, HTML)).status, path).toBe(200)
      }
      // Cost endpoints, logout, /api and /marketplace stay gated.
      expect((await post('/llm/chat', { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401)
      expect((await post('/users/logout', {})).status).toBe(401)
      expect((await get('/api/monitoring/inbound')).status).toBe(401)
      expect((await get('/marketplace/ceo/status?company=ACME')).status).toBe(401)
      gw.env.SERVICE_HARD_GATE_ENABLED = '1'
      expect((await get('/journal', HTML)).status).toBe(302)
    } finally {
      gw.env.SERVICE_HARD_GATE_ENABLED = '1'
    }
  })

  it('rule 7: the from value is sanitised, in the redirect and on the login page', async () => {
    const res = await fetch(`${gw.url}//evil.com/x`, { headers: HTML, redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/login?from=%2F')
    // the fallback lands on a page: `/` is the public landing page
    const root = await get('/', HTML)
    expect(root.status).toBe(200)
    expect(root.headers.get('content-type')).toMatch(/^text\/html/)
    for (const from of hostileFromValues) {
      const page = await get(`/login?from=${encodeURIComponent(from.slice(0, 2048))}`, HTML)
      expect(page.status, from).toBe(200)
      const html = await page.text()
      expect(html, from).toContain('const from = "/";')
    }
    const goodResponse = await get('/login?from=%2Fjournal', HTML)
    const good = await goodResponse.text()
    expect(good).toContain('const from = "/journal";')
    // Only the page's own inline script may run (CSP by hash), and the page cannot be framed.
    const script = /<script>([\s\S]*?)<\/script>/.exec(good)![1]!
    const csp = goodResponse.headers.get('content-security-policy')!
    expect(csp).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`)
    expect(csp).toContain("frame-ancestors 'none'")
  })

  it('rule 8: each redirect emits auth.gate.redirect with a keyed ip hash', async () => {
    await get('/dojo', HTML)
    const res = await get('/insight/catalogue/recent?kind=auth.gate.redirect&h=true&limit=5', session())
    expect(res.status).toBe(200)
    const { events } = (await res.json()) as { events: { kind: string; actor: string; payload: Record<string, unknown>; summary: string; at_iso: string; source_log: string }[] }
    expect(events[0]).toMatchObject({ kind: 'auth.gate.redirect', actor: 'service.gateway', payload: { path: '/dojo', reason: 'no_session' } })
    expect(events[0]!.payload.ip_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(events[0]!.summary).toContain('/dojo')
    expect(events[0]!.at_iso).toMatch(/Z$/)
    const raw = (await (await get('/insight/catalogue/recent?kind=auth.gate.redirect', session())).json()) as { events: object[] }
    expect(raw.events[0]).not.toHaveProperty('summary')
    // A 401 (non-HTML) is not a redirect and emits nothing.
    const before = raw.events.length
    await get('/book')
    const after = (await (await get('/insight/catalogue/recent?kind=auth.gate.redirect&limit=500', session())).json()) as { events: object[] }
    expect(after.events.length).toBe(Math.min(500, before))
  })
})

describe('tier matrix (seed 000 §4.2)', () => {
  const pages = ['/feedback.html', '/feedback.txt', '/journal', '/dojo', '/boardroom', '/book', '/coreterm/', '/insight/', '/registry/', '/storage/']

  it.each(pages)('GET %s: public → 302/401, logged in → 200', async (path) => {
    expect((await get(path, HTML)).status).toBe(302)
    expect((await get(path)).status).toBe(401)
    const ok = await get(path, session())
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toMatch(path.endsWith('.txt') ? /text\/plain/ : /text\/html/)
  })

  it.each(['/public', '/login', '/docs.html', '/doc/', '/autocore', '/shadow-overlord'])('GET %s: public → 200', async (path) => {
    expect((await get(path)).status).toBe(200)
  })

  it('shadow routes: public caller reaches the signature-gated handlers; a session is not a bearer', async () => {
    const challenge = await post('/admin/shadow/challenge', { scope: 'auth' })
    expect(challenge.status).toBe(200)
    const preflightPublic = await get('/admin/cabinet/ACME/preflight')
    expect(preflightPublic.status).toBe(401)
    expect(((await preflightPublic.json()) as { error: string }).error).toBe('bearer_required')
    const preflightSession = await get('/admin/cabinet/ACME/preflight', session())
    expect(preflightSession.status).toBe(401)
    expect(((await preflightSession.json()) as { error: string }).error).toBe('insufficient_privilege')
    const models = await get('/api/admin/modelserver/models', session())
    expect(models.status).toBe(401)
  })

  const costCalls: [string, string, unknown][] = [
    ['POST', '/llm/chat', { messages: [{ role: 'user', content: 'hello' }] }],
    ['POST', '/llm/completion', { prompt: 'Three words:' }],
    ['POST', '/coordinator/tasks', { goal: 'plan', agents: ['ceo', 'analyst'] }],
    ['POST', '/agents/ceo/evolve', { goal: 'be brief' }],
    ['POST', '/boardroom/convene', { company: 'NOPE', motion: 'Raise prices' }],
  ]

  it.each(costCalls)('%s %s: public caller → 401 auth_required', async (_m, path, body) => {
    const res = await post(path, body)
    expect(res.status).toBe(401)
    expect(((await res.json()) as { code: string }).code).toBe('auth_required')
  })

  it('cost endpoints: logged-in caller → 200 within the daily quota, then 402 quota_exceeded', async () => {
    const bob = privateKeyToAccount(generatePrivateKey())
    const bobToken = await gw.login(bob)
    const h = { 'x-session-token': bobToken }
    const chat = await post('/llm/chat', { messages: [{ role: 'user', content: 'hello' }] }, h)
    expect(chat.status).toBe(200)
    expect(await chat.json()).toMatchObject({ message: { role: 'assistant', content: 'reply to hello' }, eval_count: 3, total_duration_ms: 9 })
    const completion = await post('/llm/completion', { prompt: 'Three words:' }, h)
    expect(completion.status).toBe(200)
    const task = await post('/coordinator/tasks', { goal: 'plan', agents: ['ceo', 'analyst'] }, h)
    expect(task.status).toBe(200)
    expect(((await task.json()) as { task_id: string }).task_id).toMatch(/^task_[0-9A-Z]{26}$/)
    const over = await post('/agents/ceo/evolve', { goal: 'be brief' }, h)
    expect(over.status).toBe(402)
    const body = (await over.json()) as { error: string; details: Record<string, number> }
    expect(body.error).toBe('quota_exceeded')
    expect(body.details).toMatchObject({ limit: 3, used: 3, window_s: 86400 })
    // Another wallet has its own quota.
    const evolve = await post('/agents/ceo/evolve', { goal: 'be brief' }, session())
    expect(evolve.status).toBe(200)
    expect(await evolve.json()).toMatchObject({ agent: 'ceo', revision: 2 })
    expect(((await (await get('/agents/ceo', session())).json()) as { revision: number }).revision).toBe(2)
  })

  it.each(['/public', '/login', '/docs.html', '/doc/', '/autocore', '/shadow-overlord'])('GET %s: logged in → 200', async (path) => {
    expect((await get(path, session())).status).toBe(200)
  })

  it('public login routes answer the same for a logged-in caller', async () => {
    expect((await post('/users/challenge', { wallet: alice.address }, session())).status).toBe(200)
    expect((await get(`/users/${alice.address}/permissions`, session())).status).toBe(200)
    expect((await post('/admin/shadow/challenge', { scope: 'auth' }, session())).status).toBe(200)
  })

  it('boardroom with a provisioned cabinet: logged-in caller → 200 with eight weighted votes; CEO status lists the cabinet', async () => {
    // The overlord unlocks the vault and provisions ACME through the shadow tier (bearer + signed challenges).
    const auth = (await (await post('/admin/shadow/challenge', { scope: 'auth' })).json()) as { nonce: string; message: string }
    const { jwt } = (await (await post('/admin/shadow/verify', { nonce: auth.nonce, signature: await overlord.signMessage({ message: auth.message }) })).json()) as { jwt: string }
    const bearer = { authorization: `Bearer ${jwt}` }
    const message = unlockMessageFor('http://gw.test')
    const unlocked = await post('/vault/credentials/reunlock', { address: overlord.address, message, signature: await overlord.signMessage({ message }) }, bearer)
    expect(unlocked.status).toBe(200)
    const c = (await (await post('/admin/shadow/challenge', { scope: 'cabinet.provision', params: { company: 'ACME' } })).json()) as { nonce: string; message: string }
    const provisioned = await post('/admin/cabinet/ACME/provision', { nonce: c.nonce, signature: await overlord.signMessage({ message: c.message }) }, bearer)
    expect(provisioned.status).toBe(200)

    const carol = privateKeyToAccount(generatePrivateKey())
    const res = await post('/boardroom/convene', { company: 'ACME', motion: 'Raise the storage markup' }, { 'x-session-token': await gw.login(carol) })
    expect(res.status).toBe(200)
    const decision = (await res.json()) as { carried: boolean; weight_for: number; votes: { role: string; weight: number; vote: string }[] }
    expect(decision.votes).toHaveLength(8)
    expect(decision.votes[0]).toMatchObject({ role: 'ceo', weight: 30, vote: 'for' })
    expect(decision).toMatchObject({ carried: true, weight_for: 100 })
    const status = (await (await get('/marketplace/ceo/status?company=ACME', session())).json()) as { ceo: { role: string }; soldiers: unknown[] }
    expect(status.ceo.role).toBe('ceo')
    expect(status.soldiers).toHaveLength(7)
  })

  it('boardroom: unknown company → 404 cabinet_not_found, and the failed call is not counted', async () => {
    const carol = privateKeyToAccount(generatePrivateKey())
    const h = { 'x-session-token': await gw.login(carol) }
    for (let i = 0; i < 4; i++) {
      const res = await post('/boardroom/convene', { company: 'NOPE', motion: 'Raise prices' }, h)
      expect(res.status).toBe(404)
      expect(((await res.json()) as { error: string }).error).toBe('cabinet_not_found')
    }
    expect((await post('/llm/completion', { prompt: 'still within quota' }, h)).status).toBe(200)
  })

  it('read endpoints: logged-in caller → 200', async () => {
    for (const path of ['/health', '/health/detailed', '/agents', '/agents/mastermind', '/api/monitoring/inbound', '/insight/catalogue/recent', '/marketplace/ceo/status?company=ACME', '/docs', '/metrics']) {
      const res = await get(path, session())
      expect(res.status, path).toBe(200)
    }
  })
})

describe('wallet login over HTTP (seed 000 §4.3)', () => {
  it('challenge → personal_sign → session → logout', async () => {
    const dave = privateKeyToAccount(generatePrivateKey())
    const c = await post('/users/challenge', { wallet: dave.address.toLowerCase() })
    const challenge = (await c.json()) as { challenge: string; nonce: string; expires_at: number; issued_at: number }
    expect(challenge.challenge).toContain('gw.test wants you to sign in with your Ethereum account:')
    expect(challenge.challenge).toContain(dave.address)
    expect(challenge.expires_at - challenge.issued_at).toBe(300)
    const signature = await dave.signMessage({ message: challenge.challenge })
    const r = await post('/users/register-with-signature', { wallet: dave.address, challenge: challenge.challenge, signature })
    expect(r.status).toBe(200)
    expect(r.headers.get('set-cookie')).toMatch(/^svc_session=st_[A-Za-z0-9_-]{43}; Path=\/; Max-Age=86400; HttpOnly; SameSite=Lax$/)
    const s = (await r.json()) as { session_token: string; wallet: string }
    expect(s.wallet).toBe(dave.address)
    const v = await get('/users/session/validate', { 'x-session-token': s.session_token })
    expect(await v.json()).toMatchObject({ valid: true, wallet: dave.address })
    const perms = await get(`/users/${dave.address.toLowerCase()}/permissions`, { 'x-session-token': s.session_token })
    expect(await perms.json()).toMatchObject({ wallet: dave.address, tier: 'session', view: 'welcome_back', registered: true })
    expect((await get('/journal', { 'x-session-token': s.session_token })).status).toBe(200)
    const out = await post('/users/logout', {}, { 'x-session-token': s.session_token })
    expect(out.status).toBe(204)
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/)
    expect((await get('/users/session/validate', { 'x-session-token': s.session_token })).status).toBe(401)
    expect((await get('/journal', { 'x-session-token': s.session_token })).status).toBe(401)
  })

  it('replaying a signature fails with 401 challenge_invalid', async () => {
    const erin = privateKeyToAccount(generatePrivateKey())
    const { challenge } = (await (await post('/users/challenge', { wallet: erin.address })).json()) as { challenge: string }
    const signature = await erin.signMessage({ message: challenge })
    expect((await post('/users/register-with-signature', { wallet: erin.address, challenge, signature })).status).toBe(200)
    const replay = await post('/users/register-with-signature', { wallet: erin.address, challenge, signature })
    expect(replay.status).toBe(401)
    expect(await replay.json()).toMatchObject({ error: 'challenge_invalid' })
  })

  it('a challenge used after its expiry fails with 401 challenge_expired', async () => {
    const frank = privateKeyToAccount(generatePrivateKey())
    const { challenge } = (await (await post('/users/challenge', { wallet: frank.address })).json()) as { challenge: string }
    const signature = await frank.signMessage({ message: challenge })
    gw.advance(301)
    try {
      const res = await post('/users/register-with-signature', { wallet: frank.address, challenge, signature })
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ error: 'challenge_expired' })
    } finally {
      gw.advance(-301)
    }
  })

  it('a challenge used for another wallet fails with 401 challenge_invalid; a foreign signature with signature_invalid', async () => {
    const grace = privateKeyToAccount(generatePrivateKey())
    const mallory = privateKeyToAccount(generatePrivateKey())
    const { challenge } = (await (await post('/users/challenge', { wallet: grace.address })).json()) as { challenge: string }
    const bySelf = await mallory.signMessage({ message: challenge })
    const other = await post('/users/register-with-signature', { wallet: mallory.address, challenge, signature: bySelf })
    expect(other.status).toBe(401)
    expect(await other.json()).toMatchObject({ error: 'challenge_invalid' })
    const foreign = await post('/users/register-with-signature', { wallet: grace.address, challenge, signature: bySelf })
    expect(foreign.status).toBe(401)
    expect(await foreign.json()).toMatchObject({ error: 'signature_invalid' })
  })

  it('malformed requests are 400 invalid_request with the failing field, never 5xx', async () => {
    const cases: [string, unknown][] = [
      ['/users/challenge', { wallet: '0x1234' }],
      ['/users/challenge', {}],
      ['/users/challenge', { wallet: alice.address, extra: 1 }],
      ['/users/register-with-signature', { wallet: alice.address, challenge: 'x', signature: '0xdead' }],
      ['/users/register-with-signature', { wallet: alice.address, challenge: '', signature: `0x${'0'.repeat(130)}` }],
    ]
    for (const [path, body] of cases) {
      const res = await post(path, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      const json = (await res.json()) as { error: string; details: { errors: { location: string }[] } }
      expect(json.error).toBe('invalid_request')
      expect(json.details.errors[0]!.location).toBe('body')
    }
    const notJson = await fetch(`${gw.url}/users/challenge`, { method: 'POST', headers: JSON_BODY, body: '{nope' })
    expect(notJson.status).toBe(400)
    expect(((await notJson.json()) as { error: string }).error).toBe('invalid_json')
    const garbage = await post('/users/register-with-signature', { wallet: alice.address, challenge: 'not a message', signature: `0x${'1'.repeat(130)}` })
    expect(garbage.status).toBe(401)
    expect((await get('/users/not-an-address/permissions')).status).toBe(400)
    expect((await get('/users/session/validate', { 'x-session-token': 'garbage' })).status).toBe(400)
  })
})

describe('integration endpoints (seed 000 §4.5)', () => {
  it('health and detailed health with each check', async () => {
    expect(await (await get('/health', session())).json()).toMatchObject({ status: 'ok', version: '1.0.0' })
    const detailed = (await (await get('/health/detailed', session())).json()) as { status: string; checks: Record<string, { status: string; latency_ms: number }> }
    expect(detailed.status).toBe('ok')
    expect(Object.keys(detailed.checks).sort()).toEqual(['catalogue_log', 'database', 'modelserver'])
    for (const check of Object.values(detailed.checks)) expect(check.latency_ms).toBeGreaterThanOrEqual(0)
  })

  it('marketplace: agents, agent call, ingest with memory, CEO status, models via the admin route', async () => {
    const agents = (await (await get('/agents', session())).json()) as { agents: { id: string }[] }
    expect(agents.agents.map((a) => a.id)).toEqual(['ceo', 'mastermind', 'analyst', 'archivist', 'sentinel'])
    expect((await get('/agents/oracle', session())).status).toBe(404)
    const call = await post('/marketplace/agent/call', { agent: 'ceo', prompt: 'Summarise' }, session())
    expect(await call.json()).toMatchObject({ agent: 'ceo', model: 'svc-tiny-chat:latest', response: 'echo: Summarise', eval_count: 7, total_duration_ms: 12.5 })
    const ingest = await post('/marketplace/modelserver/ingest', { prompt: 'remember me', model: 'svc-tiny-chat:latest', remember: true }, session())
    const ingested = (await ingest.json()) as { stored: boolean; memory_id: string }
    expect(ingested.stored).toBe(true)
    expect(ingested.memory_id).toMatch(/^mem_[0-9A-Z]{26}$/)
    expect(model.calls.some((c) => c.path === '/api/embed')).toBe(true)
    expect(await (await get('/marketplace/ceo/status?company=GLOBEX', session())).json()).toEqual({ company: 'GLOBEX', ceo: null, soldiers: [] })
  })

  it('model-server models through the admin route with an overlord bearer token', async () => {
    const challenge = (await (await post('/admin/shadow/challenge', { scope: 'auth' })).json()) as { nonce: string; message: string }
    const signature = await overlord.signMessage({ message: challenge.message })
    const verified = await post('/admin/shadow/verify', { nonce: challenge.nonce, signature })
    expect(verified.status).toBe(200)
    const { jwt } = (await verified.json()) as { jwt: string }
    const res = await get('/api/admin/modelserver/models', { authorization: `Bearer ${jwt}` })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      base_url: model.url,
      models: [
        {
          name: 'svc-tiny-chat:latest',
          model: 'svc-tiny-chat:latest',
          modified_at: '2026-11-22T18:58:00.123Z',
          size: 524288,
          digest: 'sha256:2c3a8a4e9d8f7b6a5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b',
          details: { format: 'gguf', family: 'llama', families: null, parameter_size: '0.1M', quantization_level: 'F32' },
        },
      ],
    })
  })

  it('a model the model server does not have, or an option it refuses, is the caller\'s 400 — not a 5xx (and costs no quota)', async () => {
    // a wallet of its own: these are cost calls, and the shared session's quota of 3 is used by the tests above
    const h = { 'x-session-token': await gw.login(privateKeyToAccount(generatePrivateKey())) }
    for (let i = 0; i < 2; i++) {
      const unknown = await post('/marketplace/modelserver/ingest', { prompt: 'x', model: 'missing:latest' }, h)
      expect(unknown.status).toBe(400)
      expect(await unknown.json()).toMatchObject({ error: 'model_not_found' })
      const refused = await post('/marketplace/agent/call', { agent: 'ceo', prompt: 'x', model: 'missing:latest' }, h)
      expect(refused.status).toBe(400)
    }
  })

  it('inbound metrics and Prometheus metrics', async () => {
    const inbound = (await (await get('/api/monitoring/inbound', session())).json()) as { requests_per_minute: number; window_s: number }
    expect(inbound.window_s).toBe(60)
    expect(inbound.requests_per_minute).toBeGreaterThan(0)
    const metrics = await (await get('/metrics', session())).text()
    expect(metrics).toContain('gate_redirects_total')
    expect(metrics).toContain('http_requests_total')
  })

  it('/docs is swagger-ui with every asset local and both documents', async () => {
    const html = await (await get('/docs', session())).text()
    expect(html).toContain('/static/swagger-ui/swagger-ui-bundle.js')
    expect(html).not.toMatch(/https?:\/\//)
    const init = await (await get('/static/swagger-ui/swagger-ui-init.js')).text()
    expect(init).toContain('/doc/openapi/gateway.yaml')
    expect(init).toContain('/doc/openapi/modelserver.yaml')
    expect(init).toContain('"validatorUrl": null')
    expect((await get('/static/swagger-ui/swagger-ui-bundle.js')).status).toBe(200)
    expect((await get('/doc/openapi/modelserver.yaml')).status).toBe(200)
  })
})

describe('model server down', () => {
  it('maps every model-server call to 502 modelserver_unavailable and health to degraded', async () => {
    const down = await startTestGateway({ modelServerUrl: 'http://127.0.0.1:9' })
    try {
      const t = await down.login(privateKeyToAccount(generatePrivateKey()))
      const h = { 'x-session-token': t }
      for (const [path, body] of [
        ['/marketplace/agent/call', { agent: 'ceo', prompt: 'x' }],
        ['/marketplace/modelserver/ingest', { prompt: 'x', model: 'm' }],
        ['/llm/chat', { messages: [{ role: 'user', content: 'x' }] }],
      ] as const) {
        const res = await fetch(`${down.url}${path}`, { method: 'POST', headers: { ...JSON_BODY, ...h }, body: JSON.stringify(body) })
        expect(res.status, path).toBe(502)
        expect(((await res.json()) as { error: string }).error).toBe('modelserver_unavailable')
      }
      const health = (await (await fetch(`${down.url}/health/detailed`, { headers: h })).json()) as { status: string; checks: { modelserver: { status: string; detail: string } } }
      expect(health.status).toBe('degraded')
      expect(health.checks.modelserver.status).toBe('down')
      expect(down.validationErrors).toEqual([])
    } finally {
      await down.close()
    }
  })
})

describe('rate limit', () => {
  it('answers 429 with Retry-After in the Error shape past the per-address limit', async () => {
    const limited = await startTestGateway({ env: { SERVICE_RATE_LIMIT__MAX: '3', SERVICE_RATE_LIMIT__WINDOW_S: '30' } })
    try {
      const statuses: number[] = []
      let last: Response | undefined
      for (let i = 0; i < 5; i++) {
        last = await fetch(`${limited.url}/login`)
        statuses.push(last.status)
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await last!.json()).toMatchObject({ error: 'rate_limited' })
      expect(limited.validationErrors).toEqual([])
    } finally {
      await limited.close()
    }
  })

  it("a balancer's health probes are not counted: they never use up its address's limit, nor the limit its requests share", async () => {
    const limited = await startTestGateway({ env: { SERVICE_RATE_LIMIT__MAX: '3', SERVICE_RATE_LIMIT__WINDOW_S: '30' } })
    try {
      // three replicas checked every 500 ms: 720 probes a minute from one address, against a limit of 600
      const probes: number[] = []
      for (let i = 0; i < 8; i++) for (const path of ['/health', '/health/live', '/health/ready']) probes.push((await fetch(`${limited.url}${path}`)).status)
      expect(probes.filter((s) => s === 429)).toEqual([])
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await fetch(`${limited.url}/login`)).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      // the dependency checks are not a probe: they count
      expect((await fetch(`${limited.url}/health/detailed`)).status).toBe(429)
      expect(limited.validationErrors).toEqual([])
    } finally {
      await limited.close()
    }
  })
})

describe('every response matched the document', () => {
  it('no response validation errors and no session token in any log line', () => {
    expect(gw.validationErrors).toEqual([])
    expect(gw.logText()).not.toContain(token)
  })
})
