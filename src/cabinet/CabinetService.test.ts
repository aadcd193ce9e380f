import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import { ShadowError } from '../overlord/ShadowError.js'
import { CollectingEventSink, tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import { unlockMessageFor, Vault } from '../vault/Vault.js'
import type { Kysely } from 'kysely'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import type { Database } from '../db/Database.js'
import { CabinetExports } from './CabinetExports.js'
import { CabinetFiles } from './CabinetFiles.js'
import { CabinetStore } from './CabinetStore.js'
import { CabinetRollbackError, CabinetService, type FaultHook } from './CabinetService.js'
import { CABINET_MEMBERS } from './members.js'
import { gatewayCatalogue } from '../handlers/plugins.js'

const overlord = testOverlord()
const message = unlockMessageFor('http://cabinet.test')
const unlockSignature = await overlord.account.signMessage({ message })

const opened: DatabaseHandle[] = []
afterEach(async () => {
  for (const handle of opened.splice(0)) await handle.close()
})

async function setup(faults?: FaultHook) {
  const dir = tempDir('cabinet-')
  const database = await createDatabase({ url: `sqlite:${join(dir, 'gateway.sqlite')}` })
  opened.push(database)
  const db = database.db
  const vault = new Vault({ db, overlordAddress: () => overlord.account.address, unlockMessage: message })
  await vault.unlock({ address: overlord.account.address, signature: unlockSignature, message })
  const store = new CabinetStore(db)
  const files = new CabinetFiles(dir)
  const exports = new CabinetExports(store, files)
  const events = new CollectingEventSink()
  const cabinets = new CabinetService({ db, vault, store, events, faults, onChange: () => exports.refresh() })
  return { dir, db, vault, store, files, events, cabinets }
}

/** Every row of the admin tier's tables, and this replica's exported files. */
async function readState(db: Kysely<Database>, dir: string) {
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : null)
  return {
    vault: JSON.stringify(await db.selectFrom('vault_entries').selectAll().orderBy('entry_id').execute()),
    registry: JSON.stringify(await db.selectFrom('cabinet_registry').selectAll().orderBy('company').execute()),
    agentMap: JSON.stringify(await db.selectFrom('agent_map').selectAll().orderBy('agent_id').execute()),
    registryFile: read('cabinet_registry.json'),
    agentMapFile: read('agent_map.json'),
  }
}

describe('CabinetService (machine 3.3)', () => {
  it('lists the companies that have a cabinet, by name, bounded; a cleared one is gone', async () => {
    const { cabinets } = await setup()
    expect(await cabinets.companies()).toEqual([])
    await cabinets.provision('ZETA')
    await cabinets.provision('ACME')
    expect(await cabinets.companies()).toEqual(['ACME', 'ZETA'])
    expect(await cabinets.companies(1)).toEqual(['ACME'])
    await cabinets.clear('ZETA')
    expect(await cabinets.companies()).toEqual(['ACME'])
  })

  it('absent → present: 8 wallets in fixed order, exactly 16 vault entries, registry block, agent map, event', async () => {
    const { dir, db, vault, store, events, cabinets } = await setup()
    const provisioned = await cabinets.provision('ACME')
    const result = { ...provisioned, members: [provisioned.ceo, ...provisioned.soldiers] }
    expect(result.created).toBe(true)
    expect(Object.keys(provisioned).sort()).toEqual(['ceo', 'company', 'created', 'soldiers'])
    expect(result.members.map((m) => m.role)).toEqual(CABINET_MEMBERS.map((m) => m.role))
    expect(result.members.map((m) => m.entity_id)[0]).toBe('company:ACME:cabinet:ceo')
    expect(result.ceo.role).toBe('ceo')
    expect(result.soldiers).toHaveLength(7)
    expect(new Set(result.members.map((m) => m.address)).size).toBe(8)
    expect(result.members.reduce((s, m) => s + m.boardroom_weight, 0)).toBe(100)
    expect((await vault.list())).toHaveLength(16)
    expect((await vault.list('company:ACME:cabinet:'))).toHaveLength(16)
    for (const m of result.members) {
      expect(await vault.context(`${m.entity_id}:pk`)).toBe('cabinet_private_key')
      expect(await vault.context(`${m.entity_id}:address`)).toBe('cabinet_public')
      expect(await vault.withSecret(`${m.entity_id}:address`, (b) => b.toString())).toBe(m.address)
      expect(await vault.withSecret(`${m.entity_id}:pk`, (b) => privateKeyToAccount(`0x${b.toString('hex')}`).address)).toBe(m.address)
    }
    const registry = await store.registry()
    expect(registry.companies.get('ACME')!.members[0]!.vault_pk_id).toBe('company:ACME:cabinet:ceo:pk')
    const agents = (await store.agentMap()).agents
    expect(agents.size).toBe(7)
    expect(agents.get('company:ACME:cabinet:cro_risk')!.address).toBe(result.members[7]!.address)
    expect(events.ofKind('admin.cabinet.provisioned')).toHaveLength(1)
    expect(events.ofKind('admin.cabinet.provisioned')[0]!.payload).toEqual({ company: 'ACME', ceo_address: result.ceo.address, soldier_count: 7, created: true })
    // Roster and result never carry vault_pk_id; nothing on disk outside the vault holds a key.
    expect(JSON.stringify(result)).not.toContain('vault_pk_id')
    expect(JSON.stringify(await cabinets.roster('ACME'))).not.toContain('vault_pk_id')
    const keys = await Promise.all(result.members.map((m) => vault.withSecret(`${m.entity_id}:pk`, (b) => b.toString('hex'))))
    const state = await readState(db, dir)
    for (const key of keys) for (const text of [state.vault, state.registry, state.agentMap, state.registryFile, state.agentMapFile, JSON.stringify(events.events)]) expect(text).not.toContain(key!)
  })

  it('present → present: provisioning again is idempotent and mints nothing', async () => {
    const { db, dir, events, cabinets } = await setup()
    const first = await cabinets.provision('ACME')
    const before = await readState(db, dir)
    const again = await cabinets.provision('ACME')
    expect(again.created).toBe(false)
    expect([again.ceo, ...again.soldiers]).toEqual([first.ceo, ...first.soldiers])
    expect(await readState(db, dir)).toEqual(before)
    expect(events.ofKind('admin.cabinet.provisioned').map((e) => e.payload.created)).toEqual([true, false])
  })

  it('company names are case-preserving namespaces', async () => {
    const { vault, cabinets } = await setup()
    await cabinets.provision('acme')
    await cabinets.provision('ACME')
    expect((await vault.list())).toHaveLength(32)
  })

  it('present → absent: clear deletes the 16 entries, removes the block, nulls soldier addresses', async () => {
    const { dir, vault, store, events, cabinets } = await setup()
    await cabinets.provision('KEEP')
    await cabinets.provision('ACME')
    const cleared = await cabinets.clear('ACME')
    expect(cleared).toEqual({ company: 'ACME', cleared: true, vault_entries_deleted: 16 })
    expect((await vault.list('company:ACME:'))).toHaveLength(0)
    expect((await vault.list())).toHaveLength(16)
    expect((await store.registry()).companies.get('ACME')).toBeUndefined()
    expect((await store.registry()).companies.get('KEEP')).toBeDefined()
    const agents = (await store.agentMap()).agents
    expect([...agents].filter(([id]) => id.startsWith('company:ACME:')).every(([, a]) => a.address === null)).toBe(true)
    expect([...agents].filter(([id]) => id.startsWith('company:KEEP:')).every(([, a]) => a.address !== null)).toBe(true)
    expect(events.ofKind('admin.cabinet.cleared')[0]!.payload).toEqual({ company: 'ACME', vault_entries_deleted: 16 })
    await expect(cabinets.roster('ACME')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'cabinet_not_found')
    expect((await cabinets.preflight('ACME')).soldiers_with_address).toBe(0)
  })

  it('the registry and agent-map files are exports of the database, rewritten after each committed change', async () => {
    const { dir, db, files, cabinets } = await setup()
    await cabinets.provision('ACME')
    expect((await files.readRegistry()).companies.get('ACME')!.members).toHaveLength(8)
    expect([...(await files.readAgentMap()).agents.values()].filter((a) => a.address !== null)).toHaveLength(7)
    // a second replica's service on the same database answers the same, and its clear reaches this one's files
    const other = new CabinetService({ db, vault: new Vault({ db, overlordAddress: () => overlord.account.address, unlockMessage: message }), store: new CabinetStore(db), events: new CollectingEventSink() })
    expect((await other.roster('ACME')).members).toEqual((await cabinets.roster('ACME')).members)
    await cabinets.clear('ACME')
    const state = await readState(db, dir)
    expect(JSON.parse(state.registryFile!)).toEqual({ version: 1, companies: {} })
    await expect(other.roster('ACME')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'cabinet_not_found')
  })

  it('absent → absent: clear of a cabinet without a registry block is 404', async () => {
    const { cabinets } = await setup()
    await expect(cabinets.clear('NOPE')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'cabinet_not_found' && gatewayCatalogue.toResult(e)?.status === 404)
  })

  it('preflight reports existence, vault lock and soldiers with an address', async () => {
    const { vault, cabinets } = await setup()
    expect(await cabinets.preflight('ACME')).toEqual({ company: 'ACME', exists: false, vault_unlocked: true, soldiers_with_address: 0, members_total: 0, replicas_live: 1, replicas_unlocked: 1 })
    await cabinets.provision('ACME')
    expect(await cabinets.preflight('ACME')).toMatchObject({ exists: true, soldiers_with_address: 7, members_total: 8 })
    vault.lock()
    expect(await cabinets.preflight('ACME')).toMatchObject({ exists: true, vault_unlocked: false })
    await expect(cabinets.provision('OTHER')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'vault_locked')
  })

  it('signs as a member: the signature recovers to the member address; release returns the matching key', async () => {
    const { cabinets } = await setup()
    const { members } = await cabinets.roster((await cabinets.provision('ACME')).company)
    const cfo = members.find((m) => m.role === 'cfo_finance')!
    const signed = await cabinets.sign(cfo.entity_id, 'pay 10 USDC')
    expect(signed.address).toBe(cfo.address)
    expect(Object.keys(signed).sort()).toEqual(['address', 'signature'])
    expect(await recoverMessageAddress({ message: 'pay 10 USDC', signature: signed.signature })).toBe(cfo.address)
    const released = await cabinets.releaseKey(cfo.entity_id)
    expect(privateKeyToAccount(released.private_key).address).toBe(cfo.address)
    await expect(cabinets.sign('company:ACME:cabinet:cmo_marketing', 'x')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'agent_not_found')
    await expect(cabinets.sign('company:NOPE:cabinet:ceo', 'x')).rejects.toSatisfy((e) => e instanceof ShadowError && e.code === 'agent_not_found')
  })

  describe('a failure at any step restores vault, registry and agent map', () => {
    const recorded: string[] = []
    it('records the steps of provision and clear', async () => {
      const { cabinets } = await setup((step) => void recorded.push(step))
      await cabinets.provision('ACME')
      await cabinets.clear('ACME')
      expect(recorded.filter((s) => s.startsWith('mint:'))).toHaveLength(8)
      expect(recorded.filter((s) => s.startsWith('vault.put:'))).toHaveLength(16)
      expect(recorded.filter((s) => s.startsWith('vault.delete:'))).toHaveLength(16)
      expect(recorded).toContain('event.provisioned')
      expect(recorded).toContain('event.cleared')
    })

    it('provision: every one of the injected failures leaves the pre-operation state (absent)', async () => {
      const steps = recorded.slice(0, recorded.indexOf('event.provisioned') + 1)
      expect(steps.length).toBe(8 + 16 + 3)
      for (const failAt of steps) {
        let armed = false
        const { db, dir, vault, cabinets } = await setup((step) => {
          if (armed && step === failAt) throw new Error(`injected at ${step}`)
        })
        await cabinets.provision('KEEP') // pre-existing state that must survive
        armed = true
        const before = await readState(db, dir)
        await expect(cabinets.provision('ACME')).rejects.toBeInstanceOf(CabinetRollbackError)
        expect(await readState(db, dir), failAt).toEqual(before)
        expect((await vault.list()), failAt).toHaveLength(16)
        expect((await cabinets.preflight('ACME')).exists).toBe(false)
        armed = false
        expect((await cabinets.provision('ACME')).created, failAt).toBe(true) // retry works
      }
    }, 300_000) // 27 (19) migrated databases: minutes on a loaded machine

    it('provision: a failing catalogue (audit) rolls back too', async () => {
      const { db, dir, events, cabinets } = await setup()
      const before = await readState(db, dir)
      events.failWith = new Error('catalogue down')
      await expect(cabinets.provision('ACME')).rejects.toBeInstanceOf(CabinetRollbackError)
      // committed, then put back by the compensating transaction; the exports were rewritten from it (empty)
      const after = await readState(db, dir)
      expect({ ...after, registryFile: null, agentMapFile: null }).toEqual(before)
      expect(JSON.parse(after.registryFile!)).toEqual({ version: 1, companies: {} })
      expect(JSON.parse(after.agentMapFile!)).toEqual({ version: 1, agents: {} })
    })

    it('clear: every one of the injected failures leaves the cabinet present', async () => {
      const steps = recorded.slice(recorded.indexOf('event.provisioned') + 1)
      expect(steps.length).toBe(16 + 3)
      for (const failAt of steps) {
        let armed = false
        const { db, dir, vault, cabinets } = await setup((step) => {
          if (armed && step === failAt) throw new Error(`injected at ${step}`)
        })
        const { members } = await cabinets.roster((await cabinets.provision('ACME')).company)
        armed = true
        const before = await readState(db, dir)
        await expect(cabinets.clear('ACME')).rejects.toBeInstanceOf(CabinetRollbackError)
        expect(await readState(db, dir), failAt).toEqual(before)
        expect((await vault.list()), failAt).toHaveLength(16)
        expect((await cabinets.sign(members[3]!.entity_id, 'still here')).address).toBe(members[3]!.address)
      }
    }, 300_000) // 27 (19) migrated databases: minutes on a loaded machine
  })
})
