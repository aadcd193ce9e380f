import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { createShadowTier, type ShadowTier } from './createShadowTier.js'
import { sha256Hex } from './ShadowChallenges.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { CollectingEventSink, shadowTestConfig, tempDir, testClock, testOverlord } from '../../tests/support/shadowFixtures.js'
import { gatewayCatalogue } from '../handlers/plugins.js'

const overlord = testOverlord()
const intruder = testOverlord().account

const rejects = (code: string, status: number) => (e: unknown) => e instanceof ShadowError && e.code === code && gatewayCatalogue.toResult(e)?.status === status

describe('ShadowOverlord (seed 4.4, 7; machines 3.1-3.4)', () => {
  let tier: ShadowTier
  let events: CollectingEventSink
  let clock: ReturnType<typeof testClock>
  let dataDir: string
  const databases: DatabaseHandle[] = []
  afterEach(async () => {
    for (const d of databases.splice(0)) await d.close()
  })

  async function build(env: Record<string, string> = {}) {
    const config = shadowTestConfig(dataDir, overlord, env)
    const database = await createDatabase({ url: `sqlite:${join(dataDir, 'gateway.sqlite')}` })
    databases.push(database)
    return createShadowTier({ config, database, events, now: clock.now })
  }

  beforeEach(async () => {
    dataDir = tempDir('overlord-')
    events = new CollectingEventSink()
    clock = testClock(Math.floor(Date.now() / 1000))
    tier = await build()
  })

  async function signed(scope: string, params: Record<string, string> = {}, signer = overlord.account) {
    const challenge = await tier.overlord.challenge({ scope, params })
    return { nonce: challenge.nonce, signature: await signer.signMessage({ message: challenge.message }), challenge }
  }

  async function bearer() {
    const { jwt } = await tier.overlord.verify(await signed('auth'))
    return { authorization: `Bearer ${jwt}` }
  }

  async function provisioned(auth: { authorization: string }, company: string, body: object) {
    const r = await tier.overlord.provision(auth, company, body)
    return { ...r, members: [r.ceo, ...r.soldiers] }
  }

  async function unlock() {
    const message = tier.overlord.unlockMessage
    return tier.overlord.reunlock(await bearer(), { address: overlord.account.address, signature: await overlord.account.signMessage({ message }), message })
  }

  it('challenge: nonce 0x+64 hex, message lines, expires_at >= issue + 110', async () => {
    const before = clock.now()
    const c = await tier.overlord.challenge({ scope: 'vault.sign', params: { agent_id: 'company:ACME:cabinet:ceo', message_sha256: sha256Hex('hi').toUpperCase().replace('0X', '0x') } })
    expect(c.nonce).toMatch(/^0x[0-9a-f]{64}$/)
    expect(c.expires_at).toBeGreaterThanOrEqual(before + 110)
    expect(c.message.split('\n')).toEqual([
      'svc-shadow-overlord/v1 scope=vault.sign',
      `nonce: ${c.nonce}`,
      'agent_id: company:ACME:cabinet:ceo',
      `message_sha256: ${sha256Hex('hi')}`,
      'origin: http://gw.test',
      `issued_at: ${before}`,
      `expires_at: ${c.expires_at}`,
    ])
  })

  it('challenge rejects: unknown scope, missing/extra/invalid params, wrong confirm literal; 503 without overlord', async () => {
    await expect(tier.overlord.challenge({ scope: 'root' })).rejects.toSatisfy(rejects('invalid_scope', 400))
    await expect(tier.overlord.challenge({})).rejects.toSatisfy(rejects('invalid_scope', 400))
    await expect(tier.overlord.challenge({ scope: 'cabinet.provision' })).rejects.toSatisfy(rejects('invalid_params', 400))
    await expect(tier.overlord.challenge({ scope: 'auth', params: { company: 'X' } })).rejects.toSatisfy(rejects('invalid_params', 400))
    await expect(tier.overlord.challenge({ scope: 'cabinet.provision', params: { company: '../etc' } })).rejects.toSatisfy(rejects('invalid_params', 400))
    await expect(tier.overlord.challenge({ scope: 'vault.sign', params: { agent_id: 'a', message_sha256: '0x12' } })).rejects.toSatisfy(rejects('invalid_params', 400))
    await expect(tier.overlord.challenge({ scope: 'cabinet.clear', params: { company: 'ACME', confirm: 'DESTROY-OTHER-CABINET' } })).rejects.toSatisfy(rejects('confirm_mismatch', 400))
    await expect(tier.overlord.challenge({ scope: 'release.key', params: { agent_id: 'a', confirm: 'yes' } })).rejects.toSatisfy(rejects('confirm_mismatch', 400))
    const unconfigured = await build({ SHADOW_OVERLORD_ADDRESS: '', SHADOW_JWT_SECRET: '' })
    await expect(unconfigured.overlord.challenge({ scope: 'auth' })).rejects.toSatisfy(rejects('overlord_not_configured', 503))
  })

  describe('nonce machine 3.1 and consume order', () => {
    it('(none) → issued → consumed; consumed + consume → 409', async () => {
      const s = await signed('auth')
      expect((await tier.overlord.verify(s)).jwt).toBeTypeOf('string')
      await expect(tier.overlord.verify(s)).rejects.toSatisfy(rejects('nonce_consumed', 409))
    })

    it('issued → expired after 120 s; expired + consume → 410; pruned later → 404', async () => {
      const s = await signed('auth')
      clock.advance(119)
      const s2 = await signed('auth')
      clock.advance(1)
      await expect(tier.overlord.verify(s)).rejects.toSatisfy(rejects('nonce_expired', 410))
      expect((await tier.overlord.verify(s2)).jwt).toBeTypeOf('string')
      clock.advance(240)
      await signed('auth') // a later operation prunes
      await expect(tier.overlord.verify(s)).rejects.toSatisfy(rejects('nonce_not_found', 404))
    })

    it('unknown or malformed nonce → 404', async () => {
      const s = await signed('auth')
      await expect(tier.overlord.verify({ ...s, nonce: `0x${'ab'.repeat(32)}` })).rejects.toSatisfy(rejects('nonce_not_found', 404))
      await expect(tier.overlord.verify({ ...s, nonce: 'abc' })).rejects.toSatisfy(rejects('nonce_not_found', 404))
      await expect(tier.overlord.verify({ signature: s.signature })).rejects.toSatisfy(rejects('nonce_not_found', 404))
    })

    it('scope mismatch → 403 and the nonce stays usable for its own scope', async () => {
      const auth = await bearer()
      await unlock()
      const s = await signed('cabinet.provision', { company: 'ACME' })
      await expect(tier.overlord.verify(s)).rejects.toSatisfy(rejects('scope_mismatch', 403))
      expect((await tier.overlord.provision(auth, 'ACME', s)).created).toBe(true)
    })

    it('bound param tampering → 403 params_mismatch', async () => {
      const auth = await bearer()
      await unlock()
      const s = await signed('cabinet.provision', { company: 'ACME' })
      await expect(tier.overlord.provision(auth, 'EVIL', s)).rejects.toSatisfy(rejects('params_mismatch', 403))
      await expect(tier.overlord.provision(auth, 'acme', s)).rejects.toSatisfy(rejects('params_mismatch', 403))
    })

    it('signature by another key, high-s twin, or garbage → 403 bad_signature; nonce not burned', async () => {
      const s = await signed('auth', {}, intruder)
      await expect(tier.overlord.verify(s)).rejects.toSatisfy(rejects('bad_signature', 403))
      await expect(tier.overlord.verify({ nonce: s.nonce, signature: '0xdead' })).rejects.toSatisfy(rejects('bad_signature', 403))
      const good = await overlord.account.signMessage({ message: s.challenge.message })
      const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
      const twin = `0x${good.slice(2, 66)}${(N - BigInt(`0x${good.slice(66, 130)}`)).toString(16).padStart(64, '0')}${good.endsWith('1b') ? '1c' : '1b'}`
      expect(await recoverMessageAddress({ message: s.challenge.message, signature: twin as `0x${string}` })).toBe(overlord.account.address)
      await expect(tier.overlord.verify({ nonce: s.nonce, signature: twin })).rejects.toSatisfy(rejects('bad_signature', 403))
      expect((await tier.overlord.verify({ nonce: s.nonce, signature: good })).jwt).toBeTypeOf('string')
    })

    it('checks run in the 4.4 order: expired before scope before params before signature', async () => {
      const auth = await bearer()
      const s = await signed('cabinet.provision', { company: 'ACME' }, intruder)
      await expect(tier.overlord.clear(auth, 'OTHER', { ...s, confirm: 'x' })).rejects.toSatisfy(rejects('scope_mismatch', 403))
      await expect(tier.overlord.provision(auth, 'OTHER', s)).rejects.toSatisfy(rejects('params_mismatch', 403))
      await expect(tier.overlord.provision(auth, 'ACME', s)).rejects.toSatisfy(rejects('bad_signature', 403))
      clock.advance(120)
      await expect(tier.overlord.clear(auth, 'OTHER', s)).rejects.toSatisfy(rejects('nonce_expired', 410))
    })
  })

  describe('bearer machine 3.2 on the facade', () => {
    it('no bearer → 401 bearer_required; session token → 401 insufficient_privilege; garbage → 401 bearer_invalid', async () => {
      await expect(tier.overlord.preflight({}, 'ACME')).rejects.toSatisfy(rejects('bearer_required', 401))
      await expect(tier.overlord.preflight({ authorization: 'Basic abc' }, 'ACME')).rejects.toSatisfy(rejects('bearer_required', 401))
      await expect(tier.overlord.preflight({ hasSessionToken: true }, 'ACME')).rejects.toSatisfy(rejects('insufficient_privilege', 401))
      await expect(tier.overlord.preflight({ authorization: 'Bearer abc.def.ghi' }, 'ACME')).rejects.toSatisfy(rejects('bearer_invalid', 401))
    })

    it('a stolen bearer alone runs preflight but no state change', async () => {
      const auth = await bearer()
      expect(await tier.overlord.preflight(auth, 'ACME')).toMatchObject({ exists: false, vault_unlocked: false })
      await expect(tier.overlord.provision(auth, 'ACME', {})).rejects.toSatisfy(rejects('nonce_not_found', 404))
    })

    it('expires after 300 s; a new secret after restart invalidates it, cabinets unchanged', async () => {
      const auth = await bearer()
      await unlock()
      await tier.overlord.provision(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      clock.advance(300)
      await expect(tier.overlord.preflight(auth, 'ACME')).rejects.toSatisfy(rejects('bearer_invalid', 401))
      clock.advance(-300)
      const rotated = await build({ SHADOW_JWT_SECRET: testOverlord().jwtSecretHex })
      await expect(rotated.overlord.preflight(auth, 'ACME')).rejects.toSatisfy(rejects('bearer_invalid', 401))
      expect((await rotated.overlord.roster('ACME')).members).toHaveLength(8)
    })
  })

  describe('vault lock 3.4, sign, release', () => {
    it('after a restart signing fails 423 until reunlock (flow B), then works; flow A reads the proof file', async () => {
      const auth = await bearer()
      await unlock()
      const { members } = await provisioned(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      const ceo = members[0]!
      const message = 'transfer 5 USDC to 0xabc'
      const signFor = async () => ({ ...(await signed('vault.sign', { agent_id: ceo.entity_id, message_sha256: sha256Hex(message) })), message })

      tier = await build() // restart
      expect(await tier.overlord.preflight(auth, 'ACME')).toMatchObject({ exists: true, vault_unlocked: false, soldiers_with_address: 7 })
      await expect(tier.overlord.sign(auth, ceo.entity_id, await signFor())).rejects.toSatisfy(rejects('vault_locked', 423))
      expect(await unlock()).toEqual({ unlocked: true, flow: 'B' })
      const result = await tier.overlord.sign(auth, ceo.entity_id, await signFor())
      expect(await recoverMessageAddress({ message, signature: result.signature })).toBe(ceo.address)

      tier = await build() // restart again, flow A
      await expect(tier.overlord.reunlock(auth, undefined)).rejects.toSatisfy(rejects('unlock_proof_missing', 400))
      const unlockMessage = tier.overlord.unlockMessage
      writeFileSync(join(dataDir, 'vault_unlock_proof.json'), JSON.stringify({ address: overlord.account.address, signature: await overlord.account.signMessage({ message: unlockMessage }), message: unlockMessage }))
      expect(await tier.overlord.reunlock(auth, {})).toEqual({ unlocked: true, flow: 'A' })
      expect((await tier.overlord.sign(auth, ceo.entity_id, await signFor())).address).toBe(ceo.address)
    })

    it('reunlock with a wrong signature → 403, vault stays locked', async () => {
      const message = tier.overlord.unlockMessage
      await expect(tier.overlord.reunlock({}, { address: overlord.account.address, signature: await overlord.account.signMessage({ message }), message })).rejects.toSatisfy(rejects('bearer_required', 401))
      await expect(tier.overlord.reunlock(await bearer(), { address: overlord.account.address, signature: await intruder.signMessage({ message }), message })).rejects.toSatisfy(rejects('bad_signature', 403))
      expect(tier.vault.isUnlocked()).toBe(false)
    })

    it('sign: hash of message differs from bound hash → 400; agent tampering → 403; unknown agent → 404', async () => {
      const auth = await bearer()
      await unlock()
      const { members } = await provisioned(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      const id = members[1]!.entity_id
      const s = await signed('vault.sign', { agent_id: id, message_sha256: sha256Hex('the endorsed text') })
      await expect(tier.overlord.sign(auth, id, { ...s, message: 'other text' })).rejects.toSatisfy(rejects('message_hash_mismatch', 400))
      await expect(tier.overlord.sign(auth, members[2]!.entity_id, { ...s, message: 'the endorsed text' })).rejects.toSatisfy(rejects('params_mismatch', 403))
      const ok = await tier.overlord.sign(auth, id, { ...s, message: 'the endorsed text' })
      expect(Object.keys(ok).sort()).toEqual(['address', 'signature'])
      const ghost = 'company:ACME:cabinet:cmo_marketing'
      await expect(tier.overlord.sign(auth, ghost, { ...(await signed('vault.sign', { agent_id: ghost, message_sha256: sha256Hex('x') })), message: 'x' })).rejects.toSatisfy(rejects('agent_not_found', 404))
    })

    it('release key: confirm literal enforced (400), key returned once, critical audit event without the key', async () => {
      const auth = await bearer()
      await unlock()
      const { members } = await provisioned(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      const cro = members[7]!
      const s = await signed('release.key', { agent_id: cro.entity_id, confirm: 'RELEASE-PRIVATE-KEY' })
      await expect(tier.overlord.releaseKey(auth, cro.entity_id, { ...s, confirm: 'release-private-key' })).rejects.toSatisfy(rejects('confirm_mismatch', 400))
      await expect(tier.overlord.releaseKey(auth, cro.entity_id, { nonce: s.nonce, signature: s.signature })).rejects.toSatisfy(rejects('confirm_mismatch', 400))
      const released = await tier.overlord.releaseKey(auth, cro.entity_id, { ...s, confirm: 'RELEASE-PRIVATE-KEY' })
      expect(privateKeyToAccount(released.private_key).address).toBe(cro.address)
      const critical = events.ofKind('admin.shadow_overlord_release_key')
      expect(critical).toHaveLength(1)
      expect(critical[0]).toMatchObject({ severity: 'critical', payload: { agent_id: cro.entity_id, address: cro.address } })
      expect(JSON.stringify(events.events)).not.toContain(released.private_key.slice(2))
      await expect(tier.overlord.releaseKey(auth, cro.entity_id, { ...s, confirm: 'RELEASE-PRIVATE-KEY' })).rejects.toSatisfy(rejects('nonce_consumed', 409))
    })

    it('release key withholds the key when the critical audit event cannot be written', async () => {
      const auth = await bearer()
      await unlock()
      const { members } = await provisioned(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      const s = await signed('release.key', { agent_id: members[0]!.entity_id, confirm: 'RELEASE-PRIVATE-KEY' })
      events.failWith = new Error('catalogue down')
      await expect(tier.overlord.releaseKey(auth, members[0]!.entity_id, { ...s, confirm: 'RELEASE-PRIVATE-KEY' })).rejects.toSatisfy(rejects('audit_unavailable', 503))
    })

    it('clear: confirm literal and 404 on an absent cabinet', async () => {
      const auth = await bearer()
      await unlock()
      const absent = await signed('cabinet.clear', { company: 'NOPE', confirm: 'DESTROY-NOPE-CABINET' })
      await expect(tier.overlord.clear(auth, 'NOPE', { ...absent, confirm: 'DESTROY-NOPE-CABINET' })).rejects.toSatisfy(rejects('cabinet_not_found', 404))
      await tier.overlord.provision(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
      const s = await signed('cabinet.clear', { company: 'ACME', confirm: 'DESTROY-ACME-CABINET' })
      await expect(tier.overlord.clear(auth, 'ACME', { ...s, confirm: 'DESTROY-acme-CABINET' })).rejects.toSatisfy(rejects('confirm_mismatch', 400))
      expect(await tier.overlord.clear(auth, 'ACME', { ...s, confirm: 'DESTROY-ACME-CABINET' })).toMatchObject({ cleared: true, vault_entries_deleted: 16 })
      expect(events.ofKind('admin.cabinet.cleared')).toHaveLength(1)
    })
  })

  it('audits every operation, rejections included, never with a key, signature or token', async () => {
    const auth = await bearer()
    await unlock()
    await tier.overlord.provision(auth, 'ACME', await signed('cabinet.provision', { company: 'ACME' }))
    await tier.overlord.preflight({}, 'ACME').catch(() => {})
    const actions = events.ofKind('admin.shadow_overlord_action')
    expect(actions.map((e) => [e.payload.operation, e.payload.outcome, e.payload.reason])).toEqual([
      ['challenge', 'ok', undefined],
      ['verify', 'ok', undefined],
      ['challenge', 'ok', undefined],
      ['verify', 'ok', undefined],
      ['reunlock', 'ok', undefined],
      ['challenge', 'ok', undefined],
      ['provision', 'ok', undefined],
      ['preflight', 'rejected', 'bearer_required'],
    ])
    expect(actions[6]!.payload).toEqual({ actor: overlord.account.address, scope: 'cabinet.provision', operation: 'provision', target: 'ACME', outcome: 'ok' })
    // bearer-only operations consume no challenge: their scope is null (asyncapi ShadowOverlordActionPayload)
    expect(actions[4]!.payload).toEqual({ actor: overlord.account.address, scope: null, operation: 'reunlock', target: '', outcome: 'ok' })
    expect(actions[7]!.payload).toEqual({ actor: null, scope: null, operation: 'preflight', target: 'ACME', outcome: 'rejected', reason: 'bearer_required' })
    await tier.overlord.challenge({ scope: 'vault.export' }).catch(() => {})
    expect(events.ofKind('admin.shadow_overlord_action').at(-1)!.payload).toEqual({
      actor: null,
      scope: null,
      operation: 'challenge',
      target: '',
      outcome: 'rejected',
      reason: 'invalid_scope',
    })
    for (const e of actions) expect(Object.keys(e.payload).every((k) => ['actor', 'scope', 'operation', 'target', 'outcome', 'reason'].includes(k))).toBe(true)
    const text = JSON.stringify(events.events)
    expect(text).not.toContain(auth.authorization.slice(7))
    expect(text).not.toMatch(/0x[0-9a-f]{130}/i)
  })
})
