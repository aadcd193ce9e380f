/**
 * Machines 3.1 (nonce), 3.2 (bearer), 3.3 (cabinet), 3.4 (vault lock): every row, replayed over HTTP against a
 * live gateway signing with a test overlord key. By default the shadow tier is started locally behind the
 * real router (clock, restart, proof-file and fault hooks available, so no row is skipped). To target another
 * deployment set CONFORMANCE_GATEWAY_URL and CONFORMANCE_OVERLORD_KEY (the overlord's test private key);
 * rows needing hooks are then reported as skipped, and `wait` rows sleep for real only with
 * CONFORMANCE_ALLOW_WAIT=1.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ShadowTestApp, startShadowTestApp } from '../../../src/handlers/shadow/shadowTestApp.js'
import { tempDir, testOverlord } from '../../../src/shadow/testSupport.js'
import { loadShadowMachine, MACHINE_FILES, replayShadowMachine, type ShadowTarget } from './replay.js'

const external = process.env.CONFORMANCE_GATEWAY_URL
let target: ShadowTarget
let app: ShadowTestApp | undefined

beforeAll(async () => {
  if (external) {
    target = {
      url: () => external.replace(/\/+$/, ''),
      overlord: privateKeyToAccount(process.env.CONFORMANCE_OVERLORD_KEY as `0x${string}`),
      allowRealWait: process.env.CONFORMANCE_ALLOW_WAIT === '1',
    }
    return
  }
  const overlord = testOverlord()
  const dataDir = tempDir('shadow-conformance-')
  const baseEnv = { SHADOW_OVERLORD_ADDRESS: overlord.account.address, SHADOW_JWT_SECRET: overlord.jwtSecretHex, SHADOW_NONCES_PATH: join(dataDir, 'nonces.sqlite') }
  let offset = 0
  const now = () => Math.floor(Date.now() / 1000) + offset
  const start = (env: Record<string, string> = {}) => startShadowTestApp({ env: { ...baseEnv, ...env }, dataDir, now })
  app = await start()
  target = {
    url: () => app!.url,
    overlord: overlord.account,
    advance: async (s) => void (offset += s),
    restart: async (env) => {
      await app!.close()
      app = await start(env)
    },
    writeUnlockProof: async (proof) => {
      const path = join(dataDir, 'vault_unlock_proof.json')
      if (proof) writeFileSync(path, JSON.stringify(proof), { mode: 0o600 })
      else rmSync(path, { force: true })
    },
    setFault: (hook) => {
      app!.services.shadow.cabinets.faults = hook
    },
  }
})

afterAll(async () => {
  await app?.close()
})

for (const name of Object.keys(MACHINE_FILES) as (keyof typeof MACHINE_FILES)[]) {
  describe(`machine ${name}`, () => {
    it('every row holds', async () => {
      const machine = loadShadowMachine(name)
      const results = await replayShadowMachine(target, machine)
      expect(results.map((r) => r.id)).toEqual(machine.rows.map((r) => r.id))
      expect(results.filter((r) => !r.ok && !r.skipped)).toEqual([])
      if (!external) expect(results.filter((r) => r.skipped)).toEqual([])
    }, 120_000)
  })
}

describe('the replayer is not vacuous', () => {
  it('reports a wrong status and a broken probe', async () => {
    const machine = loadShadowMachine('nonce')
    const row = machine.rows.find((r) => r.id === '3.1-4')!
    const broken = { ...machine, rows: [{ ...row, expect: { status: 200 } }, { ...machine.rows.find((r) => r.id === '3.1-r7')!, to: 'consumed' }] }
    const results = await replayShadowMachine(target, broken)
    expect(results.map((r) => r.ok)).toEqual([false, false])
    expect(results[0]!.problems.join(' ')).toMatch(/status 409, expected 200/)
    expect(results[1]!.problems.join(' ')).toMatch(/probe consumed/)
  })
})
