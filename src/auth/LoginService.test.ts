import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import type { BackgroundCommit } from '../db/createBackgroundCommit.js'
import { CostQuota } from './CostQuota.js'
import { hashToken, LoginService } from './LoginService.js'

const alice = privateKeyToAccount(generatePrivateKey())
const bob = privateKeyToAccount(generatePrivateKey())

describe.each(dialects)('wallet login on %s', (dialect) => {
  let handle: TestDatabase
  let now = 1_795_000_000
  let service: LoginService
  const loginService = (commit?: BackgroundCommit) =>
    new LoginService({
      db: handle.db,
      publicOrigin: 'https://gw.example.com',
      chainId: 1,
      statement: 'Sign in to the gateway.',
      challengeTtlS: 300,
      sessionTtlS: 86_400,
      now: () => now,
      commit,
    })
  beforeAll(async () => {
    handle = await createTestDatabase(dialect)
    service = loginService()
  })
  afterAll(async () => {
    await handle?.close()
  })

  it('issues an EIP-4361 message bound to the origin, chain, wallet, nonce and a 5-minute expiry', async () => {
    const c = await service.createChallenge(alice.address.toLowerCase())
    const m = parseSiweMessage(c.challenge)
    expect(m.domain).toBe('gw.example.com')
    expect(m.uri).toBe('https://gw.example.com')
    expect(m.address).toBe(alice.address) // checksummed in the message
    expect(m.chainId).toBe(1)
    expect(m.nonce).toBe(c.nonce)
    expect(c.nonce).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(c.expires_at - c.issued_at).toBe(300)
    expect(validateSiweMessage({ message: m, address: alice.address, domain: 'gw.example.com', time: new Date(now * 1000) })).toBe(true)
  })

  it("commits a challenge's row through the background commit it is given, and answers only once that commit is done", async () => {
    let release: () => void = () => {}
    const committed: string[] = []
    // as `createBackgroundCommit` does on SQLite: the statements run, then the disk sync (here: held by the test)
    const background = loginService(async (write) => {
      const result = await write(handle.db)
      committed.push('row')
      await new Promise<void>((resolve) => (release = resolve))
      return result
    })
    let answered = false
    const challenge = background.createChallenge(bob.address).then((c) => {
      answered = true
      return c
    })
    await new Promise((r) => setTimeout(r, 20))
    expect(committed).toEqual(['row'])
    expect(answered).toBe(false) // not before the row is durable
    release()
    const { nonce } = await challenge
    expect(await handle.db.selectFrom('login_challenges').select('nonce').where('nonce', '=', nonce).executeTakeFirst()).toEqual({ nonce })
  })

  it('rejects a malformed wallet', async () => {
    await expect(service.createChallenge('0x1234')).rejects.toMatchObject({ code: 'invalid_wallet' })
  })

  it('logs in with a valid signature; the token is stored only as its hash', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const signature = await alice.signMessage({ message: challenge })
    const session = await service.register(alice.address.toLowerCase(), challenge, signature)
    expect(session.session_token).toMatch(/^st_[A-Za-z0-9_-]{43}$/)
    expect(session.wallet).toBe(alice.address)
    expect(session.expires_at).toBe(now + 86_400)
    const rows = await handle.db.selectFrom('sessions').selectAll().execute()
    expect(rows.some((r) => r.token_hash === hashToken(session.session_token))).toBe(true)
    expect(JSON.stringify(rows)).not.toContain(session.session_token)
    expect(await service.validate(session.session_token)).toEqual({ wallet: alice.address, expires_at: now + 86_400 })
  })

  it('refuses to replay a signature (the challenge is single use)', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const signature = await alice.signMessage({ message: challenge })
    await service.register(alice.address, challenge, signature)
    await expect(service.register(alice.address, challenge, signature)).rejects.toMatchObject({ code: 'challenge_invalid' })
  })

  it('accepts a challenge exactly once under concurrency', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const signature = await alice.signMessage({ message: challenge })
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => service.register(alice.address, challenge, signature)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
  })

  it('refuses an expired challenge', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const signature = await alice.signMessage({ message: challenge })
    now += 301
    try {
      await expect(service.register(alice.address, challenge, signature)).rejects.toMatchObject({ code: 'challenge_expired' })
    } finally {
      now -= 301
    }
  })

  it('refuses a challenge issued for another wallet, even signed by that other wallet', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const signature = await bob.signMessage({ message: challenge })
    await expect(service.register(bob.address, challenge, signature)).rejects.toMatchObject({ code: 'challenge_invalid' })
  })

  it('refuses a signature by another key, a tampered message and garbage', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const byBob = await bob.signMessage({ message: challenge })
    await expect(service.register(alice.address, challenge, byBob)).rejects.toMatchObject({ code: 'signature_invalid' })
    const tampered = challenge.replace('Sign in to the gateway.', 'Sign in to the gateway!')
    const tamperedSig = await alice.signMessage({ message: tampered })
    await expect(service.register(alice.address, tampered, tamperedSig)).rejects.toMatchObject({ code: 'challenge_invalid' })
    await expect(service.register(alice.address, challenge, '0xdeadbeef')).rejects.toMatchObject({ code: 'signature_invalid' })
    await expect(service.register(alice.address, 'not a siwe message', '0x00')).rejects.toMatchObject({ code: 'challenge_invalid' })
    // The failed attempts did not burn the challenge: the right signature still works.
    const good = await alice.signMessage({ message: challenge })
    await expect(service.register(alice.address, challenge, good)).resolves.toMatchObject({ wallet: alice.address })
  })

  it('expires sessions after their lifetime and revokes them on logout', async () => {
    const { challenge } = await service.createChallenge(alice.address)
    const { session_token } = await service.register(alice.address, challenge, await alice.signMessage({ message: challenge }))
    now += 86_400
    expect(await service.validate(session_token)).toBeUndefined()
    now -= 86_400
    expect(await service.validate(session_token)).toBeDefined()
    expect(await service.logout(session_token)).toBe(true)
    expect(await service.validate(session_token)).toBeUndefined()
    expect(await service.logout(session_token)).toBe(false)
  })

  it('tells the login page sign-in or welcome-back', async () => {
    const carol = privateKeyToAccount(generatePrivateKey())
    expect(await service.permissions(carol.address.toLowerCase())).toEqual({
      wallet: carol.address,
      tier: 'public',
      registered: false,
      has_session: false,
      view: 'sign_in',
    })
    const { challenge } = await service.createChallenge(carol.address)
    const { session_token } = await service.register(carol.address, challenge, await carol.signMessage({ message: challenge }))
    expect(await service.permissions(carol.address, session_token)).toMatchObject({ tier: 'session', registered: true, has_session: true, view: 'welcome_back' })
    expect(await service.permissions(carol.address)).toMatchObject({ tier: 'public', registered: true, has_session: false, view: 'sign_in' })
    // Another wallet's token does not count as a session for this wallet.
    expect(await service.permissions(alice.address, session_token)).toMatchObject({ has_session: false })
    // A live session is proof of a login: registered even when the `wallets` row is missing (a crash between the
    // session insert and the wallets upsert, or a row removed by hand); without the session, the row decides.
    await handle.db.deleteFrom('wallets').where('wallet', '=', carol.address.toLowerCase()).execute()
    expect(await service.permissions(carol.address.toLowerCase(), session_token)).toEqual({
      wallet: carol.address,
      tier: 'session',
      registered: true,
      has_session: true,
      view: 'welcome_back',
    })
    expect(await service.permissions(carol.address)).toMatchObject({ registered: false, has_session: false })
  })

  it('counts cost calls per wallet per day and never exceeds the limit under concurrency', async () => {
    const quota = new CostQuota(handle.db, 5, () => now)
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => quota.consume(alice.address)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5)
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(rejected.reason).toMatchObject({ code: 'quota_exceeded', meta: { limit: 5 } })
    await expect(quota.consume(bob.address)).resolves.toMatchObject({ used: 1 })
    await quota.refund(alice.address)
    await expect(quota.consume(alice.address)).resolves.toMatchObject({ used: 5 })
    now += 86_400
    await expect(quota.consume(alice.address)).resolves.toMatchObject({ used: 1 })
  })
})
