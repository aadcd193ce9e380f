import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { startTestGateway } from '../tests/support/startTestGateway.js'
import { unlockMessageFor } from '../src/vault/Vault.js'
import { seedDemoCabinet } from './demoCabinet.js'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** A devnet-like configuration: the overlord's address and secret, and flow A's proof file as `npm start` writes it. */
async function devnetLike() {
  const dataDir = mkdtempSync(join(tmpdir(), 'demo-cabinet-'))
  dirs.push(dataDir)
  const overlordKey = generatePrivateKey()
  const overlord = privateKeyToAccount(overlordKey)
  const origin = 'http://127.0.0.1:8000'
  const message = unlockMessageFor(origin)
  writeFileSync(join(dataDir, 'vault_unlock_proof.json'), JSON.stringify({ address: overlord.address, signature: await overlord.signMessage({ message }), message }), { mode: 0o600 })
  const env = {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PUBLIC_ORIGIN: origin,
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    SHADOW_OVERLORD_ADDRESS: overlord.address,
    SHADOW_JWT_SECRET: randomBytes(32).toString('hex'),
  }
  return { env, overlord, overlordKey, dataDir }
}

describe("npm start's demo cabinet", () => {
  it('is provisioned once through the admin tier, and the gateway that starts next finds it with its vault sealed', async () => {
    const { env, overlord, overlordKey, dataDir } = await devnetLike()
    expect(await seedDemoCabinet({ env, overlordKey })).toBe('provisioned')
    expect(await seedDemoCabinet({ env, overlordKey })).toBe('exists')

    const gw = await startTestGateway({ databaseUrl: `sqlite:${join(dataDir, 'gateway.sqlite')}`, env: { ...env, SERVICE_PUBLIC_ORIGIN: env.SERVICE_PUBLIC_ORIGIN } })
    try {
      const roster = await fetch(`${gw.url}/cabinet/ACME`)
      expect(roster.status).toBe(200)
      const members = ((await roster.json()) as { members: { address: string }[] }).members
      expect(members).toHaveLength(8)
      // the provisioning was the overlord's own, signed and audited like any other
      const events = await gw.database.db.selectFrom('catalogue_events').select(['kind', 'payload']).where('kind', '=', 'admin.shadow_overlord_action').execute()
      const provisions = events.map((e) => JSON.parse(e.payload as unknown as string) as Record<string, unknown>).filter((p) => p.operation === 'provision')
      expect(provisions).toEqual([{ actor: overlord.address, operation: 'provision', outcome: 'ok', scope: 'cabinet.provision', target: 'ACME' }])
      // sealed, as after every start: its bearer sees the cabinet, and the vault locked
      const challenge = (await (await fetch(`${gw.url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"scope":"auth"}' })).json()) as { nonce: string; message: string }
      const verify = await fetch(`${gw.url}/admin/shadow/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nonce: challenge.nonce, signature: await overlord.signMessage({ message: challenge.message }) }) })
      const { jwt } = (await verify.json()) as { jwt: string }
      const preflight = await fetch(`${gw.url}/admin/cabinet/ACME/preflight`, { headers: { authorization: `Bearer ${jwt}` } })
      expect(await preflight.json()).toMatchObject({ exists: true, vault_unlocked: false, members_total: 8 })
      expect(gw.validationErrors).toEqual([])
    } finally {
      await gw.close()
    }
  }, 120_000)

  it('does nothing for an overlord that is not the devnet one', async () => {
    const { env } = await devnetLike()
    expect(await seedDemoCabinet({ env, overlordKey: generatePrivateKey() })).toBe('not the devnet overlord')
  })
})
