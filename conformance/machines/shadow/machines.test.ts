/**
 * Machines 3.1 (nonce), 3.2 (bearer), 3.3 (cabinet), 3.4 (vault lock): every row, replayed over HTTP and
 * signed with a test overlord key, against three live targets started here — the whole gateway
 * (`createApp`, every domain) on SQLite and on PostgreSQL, and the shadow tier alone behind the router —
 * each with clock, restart (same data dir and database), proof-file and fault hooks, so no row is skipped.
 * Afterwards every response, log line and catalogue event of the run is swept for member private keys.
 *
 * Another deployment: CONFORMANCE_GATEWAY_URL and CONFORMANCE_OVERLORD_KEY (the overlord's test key); rows
 * needing hooks are then reported as skipped, `wait` rows sleep for real only with CONFORMANCE_ALLOW_WAIT=1.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { createApp, type GatewayApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/loadConfig.js'
import type { DatabaseDialect } from '../../../src/db/createDatabase.js'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { type ShadowTestApp, startShadowTestApp } from '../../../tests/support/shadowTestApp.js'
import { createCapturingLogger } from '../../../src/shared/logger.js'
import { tempDir, testOverlord } from '../../../tests/support/shadowFixtures.js'
import { unlockMessageFor, Vault } from '../../../src/vault/Vault.js'
import { loadShadowMachine, MACHINE_FILES, replayShadowMachine, type ShadowTarget } from './replay.js'

type Harness = { target: ShadowTarget; dataDir: string; overlord: PrivateKeyAccount; texts: () => string[]; close: () => Promise<void> }

/** The whole gateway; restart = a new `createApp` on the same data dir and database. */
async function fullGateway(dialect: DatabaseDialect): Promise<Harness> {
  const overlord = testOverlord()
  const dataDir = mkdtempSync(join(tmpdir(), `shadow-conf-${dialect}-`))
  const database: TestDatabase = await createTestDatabase(dialect)
  const baseEnv: Record<string, string> = {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: '0',
    SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    SERVICE_RATE_LIMIT__MAX: '100000',
    SHADOW_OVERLORD_ADDRESS: overlord.account.address,
    SHADOW_JWT_SECRET: overlord.jwtSecretHex,
  }
  let offset = 0
  const now = () => Math.floor(Date.now() / 1000) + offset
  const logs: (() => string)[] = []
  const responses: string[] = []
  let gateway: GatewayApp
  let server: Server
  let url = ''
  const start = async (env: Record<string, string> = {}) => {
    const merged = { ...baseEnv, ...env }
    const { logger, text } = createCapturingLogger({ name: 'gateway-conformance' })
    logs.push(text)
    gateway = await createApp({ config: loadConfig(merged), env: merged, database, logger, now, responseValidation: 'error' })
    server = gateway.app.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  const stop = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await gateway.close()
  }
  await start()
  return {
    dataDir,
    overlord: overlord.account,
    target: {
      url: () => url,
      overlord: overlord.account,
      advance: async (s) => void (offset += s),
      restart: async (env) => {
        await stop()
        await start(env)
      },
      writeUnlockProof: async (proof) => {
        const path = join(dataDir, 'vault_unlock_proof.json')
        if (proof) writeFileSync(path, JSON.stringify(proof), { mode: 0o600 })
        else rmSync(path, { force: true })
      },
      setFault: (hook) => {
        gateway.services.shadow.cabinets.faults = hook
      },
      onResponse: (r) => responses.push(r.text),
    },
    texts: () => {
      const catalogue = gateway.services.config.catalogueLogPath
      return [...responses, ...logs.map((t) => t()), existsSync(catalogue) ? readFileSync(catalogue, 'utf8') : '']
    },
    close: async () => {
      await stop()
      await database.close()
    },
  }
}

/** The shadow tier alone behind the real router (no gate, CORS or other domains). */
async function tierAlone(): Promise<Harness> {
  const overlord = testOverlord()
  const dataDir = tempDir('shadow-conf-tier-')
  const baseEnv = { SHADOW_OVERLORD_ADDRESS: overlord.account.address, SHADOW_JWT_SECRET: overlord.jwtSecretHex, SHADOW_NONCES_PATH: join(dataDir, 'nonces.sqlite') }
  let offset = 0
  const now = () => Math.floor(Date.now() / 1000) + offset
  const apps: ShadowTestApp[] = []
  const start = async (env: Record<string, string> = {}) => {
    apps.push(await startShadowTestApp({ env: { ...baseEnv, ...env }, dataDir, now }))
  }
  const current = () => apps.at(-1)!
  await start()
  return {
    dataDir,
    overlord: overlord.account,
    target: {
      url: () => current().url,
      overlord: overlord.account,
      servesLogin: false,
      advance: async (s) => void (offset += s),
      restart: async (env) => {
        await current().close()
        await start(env)
      },
      writeUnlockProof: async (proof) => {
        const path = join(dataDir, 'vault_unlock_proof.json')
        if (proof) writeFileSync(path, JSON.stringify(proof), { mode: 0o600 })
        else rmSync(path, { force: true })
      },
      setFault: (hook) => {
        current().services.shadow.cabinets.faults = hook
      },
    },
    texts: () => apps.flatMap((a) => [...a.responses.map((r) => r.body), a.logText(), JSON.stringify(a.events.events)]),
    close: async () => current().close(),
  }
}

const external = process.env.CONFORMANCE_GATEWAY_URL
const harnesses: [string, () => Promise<Harness>][] = external
  ? []
  : [
      ['whole gateway on SQLite', () => fullGateway('sqlite')],
      ['whole gateway on PostgreSQL', () => fullGateway('postgres')],
      ['shadow tier alone', tierAlone],
    ]

for (const [label, make] of harnesses) {
  describe(`shadow machines — ${label}`, () => {
    let h: Harness
    afterAll(async () => h?.close())

    for (const name of Object.keys(MACHINE_FILES) as (keyof typeof MACHINE_FILES)[]) {
      it(`machine ${name}: every row holds`, async () => {
        h ??= await make()
        const machine = loadShadowMachine(name)
        const results = await replayShadowMachine(h.target, machine)
        expect(results.map((r) => r.id)).toEqual(machine.rows.map((r) => r.id))
        expect(results.filter((r) => !r.ok && !r.skipped)).toEqual([])
        // Only the tier alone may skip, and only the rows that need wallet login.
        expect(results.filter((r) => r.skipped).every((r) => h.target.servesLogin === false && /login/.test(r.skipped!))).toBe(true)
      }, 180_000)
    }

    it('no member private key in any response, log line or catalogue event of the run', async () => {
      const vault = new Vault({ path: join(h.dataDir, 'vault.json'), overlordAddress: () => h.overlord.address, unlockMessage: unlockMessageFor('http://gw.test') })
      const message = vault.unlockMessage
      await vault.unlock({ address: h.overlord.address, signature: await h.overlord.signMessage({ message }), message })
      const keys = (await Promise.all(vault.list().filter((id) => id.endsWith(':pk')).map((id) => vault.withSecret(id, (b) => b.toString('hex'))))) as string[]
      vault.lock()
      expect(keys.length).toBeGreaterThanOrEqual(8 * 5)
      const texts = h.texts().map((t) => t.toLowerCase())
      expect(texts.length).toBeGreaterThan(100)
      for (const key of keys) expect(texts.some((t) => t.includes(key))).toBe(false)
    })

    it('the replayer is not vacuous: a wrong status and a broken probe are reported', async () => {
      const machine = loadShadowMachine('nonce')
      const row = machine.rows.find((r) => r.id === '3.1-4')!
      const broken = { ...machine, rows: [{ ...row, expect: { status: 200 } }, { ...machine.rows.find((r) => r.id === '3.1-r7')!, to: 'consumed' }] }
      const results = await replayShadowMachine(h.target, broken)
      expect(results.map((r) => r.ok)).toEqual([false, false])
      expect(results[0]!.problems.join(' ')).toMatch(/status 409, expected 200/)
      expect(results[1]!.problems.join(' ')).toMatch(/probe consumed/)
    })
  })
}

describe.runIf(external)('shadow machines — external target', () => {
  for (const name of Object.keys(MACHINE_FILES) as (keyof typeof MACHINE_FILES)[]) {
    it(`machine ${name}: every row that needs no harness hook holds`, async () => {
      const target: ShadowTarget = {
        url: () => external!.replace(/\/+$/, ''),
        overlord: privateKeyToAccount(process.env.CONFORMANCE_OVERLORD_KEY as `0x${string}`),
        allowRealWait: process.env.CONFORMANCE_ALLOW_WAIT === '1',
      }
      const results = await replayShadowMachine(target, loadShadowMachine(name))
      expect(results.filter((r) => !r.ok && !r.skipped)).toEqual([])
    }, 900_000)
  }
})

