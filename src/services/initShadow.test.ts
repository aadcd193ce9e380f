import { describe, expect, it } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import { startShadowTestApp } from '../../tests/support/shadowTestApp.js'

describe('shadow tier start', () => {
  const { account } = testOverlord()

  it.each([
    ['missing', undefined],
    ['31 bytes', 'ab'.repeat(31)],
    ['all zero', '00'.repeat(32)],
    ['repeated pattern', 'deadbeef'.repeat(8)],
  ])('refuses to start with a %s SHADOW_JWT_SECRET (ConfigError naming the variable, secret not echoed)', async (_label, secret) => {
    const env: Record<string, string> = { SHADOW_OVERLORD_ADDRESS: account.address }
    if (secret) env.SHADOW_JWT_SECRET = secret
    const error = await startShadowTestApp({ env, dataDir: tempDir('init-') }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('SHADOW_JWT_SECRET')
    if (secret) expect((error as Error).message).not.toContain(secret)
  })
})
