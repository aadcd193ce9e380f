import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { recoverMessageAddress } from 'viem'
import { createAjv, loadOpenApiDocument } from '../../shared/http/index.js'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CollectingEventSink, tempDir, testOverlord } from '../../../tests/support/shadowFixtures.js'
import { unlockMessageFor, Vault } from '../../vault/Vault.js'
import { type ShadowTestApp, startShadowTestApp } from '../../../tests/support/shadowTestApp.js'

const overlord = testOverlord()
const intruder = testOverlord().account
const dataDir = tempDir('shadow-http-')
const env = {
  SHADOW_OVERLORD_ADDRESS: overlord.account.address,
  SHADOW_JWT_SECRET: overlord.jwtSecretHex,
  SHADOW_NONCES_PATH: join(dataDir, 'nonces.sqlite'),
}
const events = new CollectingEventSink()
/** Every app the suite starts: the leak sweep reads all of them. */
const apps: ShadowTestApp[] = []
let app: ShadowTestApp

async function start(extraEnv: Record<string, string> = {}) {
  const started = await startShadowTestApp({ env: { ...env, ...extraEnv }, dataDir, events })
  apps.push(started)
  return started
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, body: json, text, headers: res.headers }
}

async function signedChallenge(scope: string, params: Record<string, string> = {}, signer = overlord.account) {
  const c = await call('POST', '/admin/shadow/challenge', Object.keys(params).length ? { scope, params } : { scope })
  expect(c.status, c.text).toBe(200)
  return { nonce: c.body.nonce as string, signature: await signer.signMessage({ message: c.body.message }) }
}

let bearer: Record<string, string>
async function newBearer() {
  const v = await call('POST', '/admin/shadow/verify', await signedChallenge('auth'))
  expect(v.status, v.text).toBe(200)
  return { authorization: `Bearer ${v.body.jwt}` }
}

const sha256 = (s: string) => `0x${createHash('sha256').update(s, 'utf8').digest('hex')}`
const unlockMessage = unlockMessageFor('http://gw.test')
const flowB = async () => ({ address: overlord.account.address, signature: await overlord.account.signMessage({ message: unlockMessage }), message: unlockMessage })

describe('shadow tier over HTTP (router + openapi/gateway.yaml validation)', () => {
  beforeAll(async () => {
    app = await start()
    bearer = await newBearer()
  })

  afterAll(async () => {
    for (const a of apps) await a.close()
  })

  it('serves the self-contained admin page at /cabinet, /cabinet.html, /shadow-overlord', async () => {
    for (const path of ['/cabinet', '/cabinet.html', '/shadow-overlord']) {
      const r = await call('GET', path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/html')
      expect(r.text).toContain('personal_sign')
      expect(r.text).toContain('/admin/shadow/challenge')
      expect(r.text).not.toMatch(/<script[^>]+src=/)
      expect(r.text).not.toMatch(/https?:\/\/(?!gw\.test)[a-z]/i)
      const script = /<script>([\s\S]*?)<\/script>/.exec(r.text)![1]!
      expect(r.headers.get('content-security-policy')).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`)
    }
  })

  it('rejects before unlock: no bearer 401, session token 401, unknown scope 400, vault locked 423', async () => {
    expect((await call('GET', '/admin/cabinet/ACME/preflight')).body.error).toBe('bearer_required')
    const session = await call('GET', '/admin/cabinet/ACME/preflight', undefined, { 'x-session-token': 'abc' })
    expect([session.status, session.body.error]).toEqual([401, 'insufficient_privilege'])
    const bad = await call('GET', '/admin/cabinet/ACME/preflight', undefined, { authorization: 'Bearer a.b.c' })
    expect([bad.status, bad.body.error]).toEqual([401, 'bearer_invalid'])
    // `scope` is a plain string in the document: the handler's `invalid_scope`, not the router's `invalid_request`
    const unknownScope = await call('POST', '/admin/shadow/challenge', { scope: 'vault.export' })
    expect([unknownScope.status, unknownScope.body.error]).toEqual([400, 'invalid_scope'])
    const pre = await call('GET', '/admin/cabinet/ACME/preflight', undefined, bearer)
    expect(pre.body).toEqual({ company: 'ACME', exists: false, vault_unlocked: false, soldiers_with_address: 0, members_total: 0, replicas_live: 1, replicas_unlocked: 0 })
    const locked = await call('POST', '/admin/cabinet/ACME/provision', await signedChallenge('cabinet.provision', { company: 'ACME' }), bearer)
    expect([locked.status, locked.body.error]).toEqual([423, 'vault_locked'])
  })

  it('reunlock: bearer required; wrong signature 403; flow B unlocks (first time initialises)', async () => {
    expect((await call('POST', '/vault/credentials/reunlock', await flowB())).status).toBe(401)
    const wrong = await call('POST', '/vault/credentials/reunlock', { ...(await flowB()), signature: await intruder.signMessage({ message: unlockMessage }) }, bearer)
    expect([wrong.status, wrong.body.error]).toEqual([403, 'bad_signature'])
    const ok = await call('POST', '/vault/credentials/reunlock', await flowB(), bearer)
    expect([ok.status, ok.body]).toEqual([200, { unlocked: true, flow: 'B' }])
  })

  it('provision → roster → sign → release → clear, with every reject condition on the way', async () => {
    const provisionChallenge = await signedChallenge('cabinet.provision', { company: 'ACME' })
    const tampered = await call('POST', '/admin/cabinet/GLOBEX/provision', provisionChallenge, bearer)
    expect([tampered.status, tampered.body.error]).toEqual([403, 'params_mismatch'])
    const scope = await call('POST', '/admin/shadow/verify', provisionChallenge)
    expect([scope.status, scope.body.error]).toEqual([403, 'scope_mismatch'])
    const p = await call('POST', '/admin/cabinet/ACME/provision', provisionChallenge, bearer)
    expect(p.status, p.text).toBe(200)
    expect(p.body.created).toBe(true)
    expect(p.body.soldiers).toHaveLength(7)
    const replay = await call('POST', '/admin/cabinet/ACME/provision', provisionChallenge, bearer)
    expect([replay.status, replay.body.error]).toEqual([409, 'nonce_consumed'])
    const again = await call('POST', '/admin/cabinet/ACME/provision', await signedChallenge('cabinet.provision', { company: 'ACME' }), bearer)
    expect([again.status, again.body.created, again.body.ceo]).toEqual([200, false, p.body.ceo])

    const roster = await call('GET', '/cabinet/ACME')
    expect(roster.status).toBe(200)
    expect(roster.body.members).toHaveLength(8)
    expect(roster.text).not.toContain('vault_pk_id')
    expect((await call('GET', '/cabinet/GLOBEX')).status).toBe(404)
    expect((await call('GET', '/admin/cabinet/ACME/preflight', undefined, bearer)).body).toEqual({
      company: 'ACME', exists: true, vault_unlocked: true, soldiers_with_address: 7, members_total: 8, replicas_live: 1, replicas_unlocked: 1,
    })

    const cfo = roster.body.members[2]
    const message = 'transfer 25 USDC to 0x52908400098527886E0F7030069857D2E4169EE7'
    const signC = await signedChallenge('vault.sign', { agent_id: cfo.entity_id, message_sha256: sha256(message) })
    const mismatch = await call('POST', `/vault/sign/${cfo.entity_id}`, { ...signC, message: `${message}!` }, bearer)
    expect([mismatch.status, mismatch.body.error]).toEqual([400, 'message_hash_mismatch'])
    const badSig = await call('POST', `/vault/sign/${cfo.entity_id}`, { ...signC, message, signature: await intruder.signMessage({ message: 'x' }) }, bearer)
    expect([badSig.status, badSig.body.error]).toEqual([403, 'bad_signature'])
    const signed = await call('POST', `/vault/sign/${cfo.entity_id}`, { ...signC, message }, bearer)
    expect(signed.status, signed.text).toBe(200)
    expect(Object.keys(signed.body).sort()).toEqual(['address', 'signature'])
    expect(await recoverMessageAddress({ message, signature: signed.body.signature })).toBe(cfo.address)

    // An agent id with a slash is sent as %2F and reaches the handler decoded.
    const slashed = 'company:ACME/x:cabinet:ceo'
    const slashC = await signedChallenge('vault.sign', { agent_id: slashed, message_sha256: sha256('m') })
    const slash = await call('POST', `/vault/sign/${slashed.replace('/', '%2F')}`, { ...slashC, message: 'm' }, bearer)
    expect([slash.status, slash.body.error]).toEqual([404, 'agent_not_found'])
    expect((await call('POST', '/admin/shadow/verify', { nonce: `0x${'ab'.repeat(32)}`, signature: signC.signature })).status).toBe(404)

    const cro = roster.body.members[7]
    const relC = await signedChallenge('release.key', { agent_id: cro.entity_id, confirm: 'RELEASE-PRIVATE-KEY' })
    const wrongConfirm = await call('POST', `/admin/shadow/release-key/${cro.entity_id}`, { ...relC, confirm: 'RELEASE' }, bearer)
    expect([wrongConfirm.status, wrongConfirm.body.error]).toEqual([400, 'confirm_mismatch'])
    const released = await call('POST', `/admin/shadow/release-key/${cro.entity_id}`, { ...relC, confirm: 'RELEASE-PRIVATE-KEY' }, bearer)
    expect(released.status, released.text).toBe(200)
    expect(released.headers.get('cache-control')).toBe('no-store')
    expect(privateKeyToAccount(released.body.private_key).address).toBe(cro.address)
    expect(events.ofKind('admin.shadow_overlord_release_key')[0]).toMatchObject({ severity: 'critical' })

    const absent = await call('POST', '/admin/cabinet/GLOBEX/clear', { ...(await signedChallenge('cabinet.clear', { company: 'GLOBEX', confirm: 'DESTROY-GLOBEX-CABINET' })), confirm: 'DESTROY-GLOBEX-CABINET' }, bearer)
    expect([absent.status, absent.body.error]).toEqual([404, 'cabinet_not_found'])
    expect((await call('POST', '/admin/shadow/challenge', { scope: 'cabinet.clear', params: { company: 'ACME', confirm: 'DESTROY-acme-CABINET' } })).body.error).toBe('confirm_mismatch')
    const clear = await call('POST', '/admin/cabinet/ACME/clear', { ...(await signedChallenge('cabinet.clear', { company: 'ACME', confirm: 'DESTROY-ACME-CABINET' })), confirm: 'DESTROY-ACME-CABINET' }, bearer)
    expect([clear.status, clear.body]).toEqual([200, { company: 'ACME', cleared: true, vault_entries_deleted: 16 }])
    expect((await call('GET', '/cabinet/ACME')).status).toBe(404)
  })

  it('after a restart signing fails 423 until reunlock; flow A (proof file) unlocks', async () => {
    const p = await call('POST', '/admin/cabinet/BETA/provision', await signedChallenge('cabinet.provision', { company: 'BETA' }), bearer)
    const ceo = p.body.ceo
    app = await start() // restart: same data dir, same secret (bearer still valid), vault sealed
    const signOnce = async () =>
      call('POST', `/vault/sign/${ceo.entity_id}`, { ...(await signedChallenge('vault.sign', { agent_id: ceo.entity_id, message_sha256: sha256('hello') })), message: 'hello' }, bearer)
    const locked = await signOnce()
    expect([locked.status, locked.body.error]).toEqual([423, 'vault_locked'])
    expect((await call('GET', '/admin/cabinet/BETA/preflight', undefined, bearer)).body.vault_unlocked).toBe(false)
    const noProof = await call('POST', '/vault/credentials/reunlock', undefined, bearer)
    expect([noProof.status, noProof.body.error]).toEqual([400, 'unlock_proof_missing'])
    writeFileSync(join(dataDir, 'vault_unlock_proof.json'), JSON.stringify(await flowB()), { mode: 0o600 })
    const a = await call('POST', '/vault/credentials/reunlock', undefined, bearer)
    expect([a.status, a.body]).toEqual([200, { unlocked: true, flow: 'A' }])
    const ok = await signOnce()
    expect(ok.status).toBe(200)
    expect(ok.body.address).toBe(ceo.address)
  })

  it('a rotated JWT secret after restart invalidates the bearer; the cabinet is unchanged', async () => {
    app = await start({ SHADOW_JWT_SECRET: testOverlord().jwtSecretHex })
    const r = await call('GET', '/admin/cabinet/BETA/preflight', undefined, bearer)
    expect([r.status, r.body.error]).toEqual([401, 'bearer_invalid'])
    expect((await call('GET', '/cabinet/BETA')).body.members).toHaveLength(8)
    bearer = await newBearer()
  })

  it('503 overlord_not_configured when SHADOW_OVERLORD_ADDRESS is unset', async () => {
    app = await start({ SHADOW_OVERLORD_ADDRESS: '', SHADOW_JWT_SECRET: '' })
    const r = await call('POST', '/admin/shadow/challenge', { scope: 'auth' })
    expect([r.status, r.body.error]).toEqual([503, 'overlord_not_configured'])
  })

  it('every response matched the document, and no client mistake produced a 5xx', () => {
    expect(apps.flatMap((a) => a.validationErrors)).toEqual([])
    const fiveXX = apps.flatMap((a) => a.responses).filter((r) => r.status >= 500)
    expect(fiveXX.map((r) => r.body.includes('overlord_not_configured'))).toEqual(fiveXX.map(() => true))
  })

  it('every audit and cabinet event matches its AsyncAPI payload schema', () => {
    const asyncapi = loadOpenApiDocument(fileURLToPath(new URL('../../../asyncapi/events.yaml', import.meta.url)))
    const ajv = createAjv()
    ajv.addSchema({ $id: 'events.yaml', ...asyncapi })
    const schemaOf: Record<string, string> = {
      'admin.shadow_overlord_action': 'ShadowOverlordActionPayload',
      'admin.cabinet.provisioned': 'CabinetProvisionedPayload',
      'admin.cabinet.cleared': 'CabinetClearedPayload',
      'admin.shadow_overlord_release_key': 'ShadowOverlordReleaseKeyPayload',
    }
    const seen = new Set<string>()
    for (const event of events.events) {
      const name = schemaOf[event.kind]
      expect(name, event.kind).toBeDefined()
      const validate = ajv.getSchema(`events.yaml#/components/schemas/${name}`)!
      expect(validate(event.payload), `${event.kind} ${JSON.stringify(event.payload)} ${JSON.stringify(validate.errors)}`).toBe(true)
      seen.add(event.kind)
    }
    expect([...seen].sort()).toEqual(Object.keys(schemaOf).sort())
    const outcomes = events.ofKind('admin.shadow_overlord_action').map((e) => `${e.payload.operation}:${e.payload.outcome}`)
    for (const op of ['challenge', 'verify', 'preflight', 'provision', 'clear', 'sign', 'release_key', 'reunlock']) {
      expect(outcomes).toContain(`${op}:ok`)
      expect(outcomes).toContain(`${op}:rejected`)
    }
  })

  it('no member private key appears in any log line, event, error body or response except release-key responses', async () => {
    const vault = new Vault({ db: apps.at(-1)!.services.db, overlordAddress: () => overlord.account.address, unlockMessage })
    await vault.unlock(await flowB())
    const keys = (await Promise.all((await vault.list()).filter((id) => id.endsWith(':pk')).map((id) => vault.withSecret(id, (b) => b.toString('hex'))))) as string[]
    // ACME was cleared (its keys are gone from the vault); the release-key response captured one ACME key.
    const releasedKeys = apps.flatMap((a) => a.responses).filter((r) => r.operationId === 'releaseKey' && r.status === 200).map((r) => JSON.parse(r.body).private_key.slice(2) as string)
    const allKeys = [...keys, ...releasedKeys]
    expect(keys).toHaveLength(8)
    expect(releasedKeys).toHaveLength(1)
    const haystacks = [
      ...apps.flatMap((a) => a.responses.filter((r) => !(r.operationId === 'releaseKey' && r.status === 200)).map((r) => r.body)),
      ...apps.map((a) => a.logText()),
      JSON.stringify(events.events),
      JSON.stringify(apps.flatMap((a) => a.validationErrors)),
    ]
    expect(haystacks.length).toBeGreaterThan(40)
    for (const key of allKeys) {
      for (const text of haystacks) {
        expect(text.toLowerCase().includes(key.toLowerCase())).toBe(false)
      }
    }
    vault.lock()
  })
})
