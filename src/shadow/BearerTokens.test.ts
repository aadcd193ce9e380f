import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { SignJWT, UnsecuredJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { BearerTokens } from './BearerTokens.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { testClock, testOverlord } from '../../tests/support/shadowFixtures.js'
import { gatewayCatalogue } from '../handlers/plugins.js'

describe('BearerTokens (machine 3.2)', () => {
  const secret = randomBytes(32)
  const clock = testClock()
  const tokens = new BearerTokens(secret, clock.now)
  const { account } = testOverlord()

  async function expectInvalid(promise: Promise<unknown>) {
    await expect(promise).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'bearer_invalid' && gatewayCatalogue.toResult(e)?.status === 401)
  }

  it('(none) → valid: HS256, sub = overlord, scope auth, 300 s', async () => {
    const { jwt, exp } = await tokens.issue(account.address)
    expect(exp).toBe(clock.now() + 300)
    expect(JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'HS256' })
    const claims = await tokens.verify(jwt, account.address)
    expect(claims).toMatchObject({ sub: account.address, scope: 'auth', exp })
  })

  it('valid → expired after 300 s', async () => {
    const { jwt } = await tokens.issue(account.address)
    clock.advance(299)
    await tokens.verify(jwt, account.address)
    clock.advance(1)
    await expectInvalid(tokens.verify(jwt, account.address))
  })

  it('valid → invalid after secret rotation and restart', async () => {
    const { jwt } = await tokens.issue(account.address)
    await expectInvalid(new BearerTokens(randomBytes(32), clock.now).verify(jwt, account.address))
  })

  it('rejects other algorithms: none, HS512, RS256', async () => {
    const base = { scope: 'auth', sub: account.address, iss: 'svc-shadow-overlord', aud: 'svc-shadow-admin' }
    const now = clock.now()
    const unsecured = new UnsecuredJWT(base).setIssuedAt(now).setExpirationTime(now + 300).encode()
    await expectInvalid(tokens.verify(unsecured, account.address))
    const hs512 = await new SignJWT(base).setProtectedHeader({ alg: 'HS512' }).setIssuedAt(now).setExpirationTime(now + 300).sign(randomBytes(64))
    await expectInvalid(tokens.verify(hs512, account.address))
    const hs512same = await new SignJWT(base).setProtectedHeader({ alg: 'HS512' }).setIssuedAt(now).setExpirationTime(now + 300).sign(secret)
    await expectInvalid(tokens.verify(hs512same, account.address))
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const rs = await new SignJWT(base).setProtectedHeader({ alg: 'RS256' }).setIssuedAt(now).setExpirationTime(now + 300).sign(privateKey)
    await expectInvalid(tokens.verify(rs, account.address))
  })

  it('rejects a token for another subject or another scope, and garbage', async () => {
    const other = testOverlord().account.address
    await expectInvalid(tokens.verify((await tokens.issue(other)).jwt, account.address))
    const now = clock.now()
    const wrongScope = await new SignJWT({ scope: 'vault.sign' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(account.address)
      .setIssuer('svc-shadow-overlord')
      .setAudience('svc-shadow-admin')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(secret)
    await expectInvalid(tokens.verify(wrongScope, account.address))
    await expectInvalid(tokens.verify('not.a.jwt', account.address))
  })
})
