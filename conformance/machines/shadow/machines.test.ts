/**
 * Machines 3.1 (nonce), 3.2 (bearer), 3.3 (cabinet), 3.4 (vault lock): every row, replayed by the conformance
 * runner (conformance/runner.ts, driver `shadow`) over HTTP and signed with a test overlord key, against three
 * live targets started here — the whole gateway
 * (`createApp`, every domain) on SQLite and on PostgreSQL, and the shadow tier alone behind the router —
 * each with clock, restart (same data dir and database), proof-file and fault hooks, so no row is skipped.
 * Afterwards every response, log line and catalogue event of the run is swept for member private keys.
 *
 * Another deployment: `npm run conformance -- --gateway <url> --key overlord=0x…` (rows needing hooks are then
 * reported as skipped).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PrivateKeyAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { createApp, type GatewayApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/loadConfig.js'
import { createGatewayServer } from '../../../src/createGatewayServer.js'
import type { Kysely } from 'kysely'
import type { DatabaseDialect } from '../../../src/db/createDatabase.js'
import type { Database } from '../../../src/db/Database.js'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { type ShadowTestApp, startShadowTestApp } from '../../../tests/support/shadowTestApp.js'
import { createCapturingLogger } from '../../../tests/support/createCapturingLogger.js'
import { tempDir, testOverlord } from '../../../tests/support/shadowFixtures.js'
import { unlockMessageFor, Vault } from '../../../src/vault/Vault.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import type { Target } from '../../types.js'

const MACHINES = ['shadow-nonce', 'shadow-bearer', 'shadow-cabinet', 'shadow-vault-lock']

/** A cabinet fault hook failing the `at`-th provisioning step from now (what the hooks port arms over HTTP). */
function stepFault(at: number): (step: string) => void {
  let i = 0
  return () => {
    if (i++ === at) throw new Error(`conformance fault at step ${at}`)
  }
}

type Harness = { target: Target; dataDir: string; db: () => Kysely<Database>; overlord: PrivateKeyAccount; texts: () => string[]; close: () => Promise<void> }

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
    const config = loadConfig(merged)
    gateway = await createApp({ config, env: merged, database, logger, now, responseValidation: 'error' })
    server = createGatewayServer(gateway.app, config.http).listen(0, '127.0.0.1')
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
    db: () => database.db,
    overlord: overlord.account,
    target: {
      urls: {
        get gateway() {
          return url
        },
      },
      keys: { overlord: overlord.account },
      hooks: {
        login: true,
        clock: async (s) => void (offset += s),
        restart: async (env) => {
          await stop()
          await start(env)
        },
        proof_file: async (proof) => {
          const path = join(dataDir, 'vault_unlock_proof.json')
          if (proof) writeFileSync(path, JSON.stringify(proof), { mode: 0o600 })
          else rmSync(path, { force: true })
        },
        faults: {
          cabinetStep: async (at) => {
            gateway.services.shadow.cabinets.faults = at === undefined ? undefined : stepFault(at)
          },
        },
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
    db: () => current().services.db,
    overlord: overlord.account,
    target: {
      urls: {
        get gateway() {
          return current().url
        },
      },
      keys: { overlord: overlord.account },
      hooks: {
        // no `login`: the tier alone serves no wallet login
        clock: async (s) => void (offset += s),
        restart: async (env) => {
          await current().close()
          await start(env)
        },
        proof_file: async (proof) => {
          const path = join(dataDir, 'vault_unlock_proof.json')
          if (proof) writeFileSync(path, JSON.stringify(proof), { mode: 0o600 })
          else rmSync(path, { force: true })
        },
        faults: {
          cabinetStep: async (at) => {
            current().services.shadow.cabinets.faults = at === undefined ? undefined : stepFault(at)
          },
        },
      },
    },
    texts: () => apps.flatMap((a) => [...a.responses.map((r) => r.body), a.logText(), JSON.stringify(a.events.events)]),
    close: async () => current().close(),
  }
}

const harnesses: [string, () => Promise<Harness>][] = [
  ['whole gateway on SQLite', () => fullGateway('sqlite')],
  ['whole gateway on PostgreSQL', () => fullGateway('postgres')],
  ['shadow tier alone', tierAlone],
]

for (const [label, make] of harnesses) {
  describe(`shadow machines — ${label}`, () => {
    let h: Harness
    afterAll(async () => h?.close())

    for (const name of MACHINES) {
      it(`machine ${name}: every row holds`, async () => {
        h ??= await make()
        const machine = loadMachine(name)
        const results = await runMachine(machine, h.target)
        expect(results.map((r) => r.id)).toEqual(machine.rows.map((r) => r.id))
        expect(results.filter((r) => r.outcome === 'failed'), formatText(results)).toEqual([])
        // Only the tier alone may skip, and only the rows that need wallet login.
        expect(results.filter((r) => r.outcome === 'skipped').every((r) => !h.target.hooks.login && /login/.test(r.reason!))).toBe(true)
      }, 180_000)
    }

    it('no member private key in any response, log line or catalogue event of the run', async () => {
      const vault = new Vault({ db: h.db(), overlordAddress: () => h.overlord.address, unlockMessage: unlockMessageFor('http://gw.test') })
      const message = vault.unlockMessage
      await vault.unlock({ address: h.overlord.address, signature: await h.overlord.signMessage({ message }), message })
      const keys = (await Promise.all((await vault.list()).filter((id) => id.endsWith(':pk')).map((id) => vault.withSecret(id, (b) => b.toString('hex'))))) as string[]
      vault.lock()
      expect(keys.length).toBeGreaterThanOrEqual(8 * 5)
      const texts = h.texts().map((t) => t.toLowerCase())
      expect(texts.length).toBeGreaterThan(100)
      for (const key of keys) expect(texts.some((t) => t.includes(key))).toBe(false)
    })

    it('the runner is not vacuous: a wrong status and a broken probe are reported', async () => {
      const machine = loadMachine('shadow-nonce')
      const row = machine.rows.find((r) => r.id === '3.1-4')!
      const broken = { ...machine, rows: [{ ...row, expect: { status: 200 } }, { ...machine.rows.find((r) => r.id === '3.1-r7')!, to: 'consumed' }] }
      const results = await runMachine(broken, h.target)
      expect(results.map((r) => r.outcome)).toEqual(['failed', 'failed'])
      expect(results[0]!.problems.join(' ')).toMatch(/status 409, expected 200/)
      expect(results[1]!.problems.join(' ')).toMatch(/probe consumed/)
    })
  })
}
