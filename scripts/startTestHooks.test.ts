import { describe, expect, it } from 'vitest'
import { DEFAULT_TEST_HOOKS_PORT, testHooksSettings } from './startTestHooks.js'

describe('npm start --test-hooks: the hooks port', () => {
  it('is 8407, shifted by DEVNET_PORT_OFFSET as the devnet ports are (two npm starts side by side do not share it); SERVICE_TEST_HOOKS__PORT wins', async () => {
    const portOf = async (env: NodeJS.ProcessEnv) => Number(new URL((await testHooksSettings(['--test-hooks'], env))!.url).port)
    expect(await portOf({})).toBe(DEFAULT_TEST_HOOKS_PORT)
    expect(await portOf({ DEVNET_PORT_OFFSET: '100' })).toBe(DEFAULT_TEST_HOOKS_PORT + 100)
    expect(await portOf({ DEVNET_PORT_OFFSET: '100', SERVICE_TEST_HOOKS__PORT: '9999' })).toBe(9999)
    expect(await testHooksSettings([], {})).toBeUndefined()
  })
})
