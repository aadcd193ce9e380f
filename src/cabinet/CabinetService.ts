import { getAddress, type Hex, recoverMessageAddress, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { EventSink } from '../catalogue/EventSink.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { BaseError } from '../shared/errors/BaseError.js'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { Vault } from '../vault/Vault.js'
import type { RegistryBlock, RegistryMember } from './CabinetFiles.js'
import type { CabinetStore } from './CabinetStore.js'
import {
  addressEntryId,
  agentIdFor,
  CABINET_MEMBERS,
  parseCabinetAgentId,
  pkEntryId,
  PRIVATE_KEY_CONTEXT,
  PUBLIC_ADDRESS_CONTEXT,
  SOLDIER_ROLES,
} from './members.js'

/** Public roster item (docs/design.md "Cabinet"): never `vault_pk_id`. */
export type RosterItem = { role: string; label: string; address: string; entity_id: string; boardroom_weight: number }
export type Roster = { company: string; members: RosterItem[] }
export type ProvisionResult = { company: string; created: boolean; ceo: RosterItem; soldiers: RosterItem[] }
export type ClearResult = { company: string; cleared: true; vault_entries_deleted: number }
export type Preflight = {
  company: string
  exists: boolean
  vault_unlocked: boolean
  soldiers_with_address: number
  /** Members in the registry block: 8 when the cabinet exists, else 0. */
  members_total: number
  /** Live replicas of the deployment and how many of them hold the data key. */
  replicas_live: number
  replicas_unlocked: number
}
export type SignResult = { address: string; signature: Hex }
export type ReleasedKey = { agent_id: string; address: string; private_key: Hex; warning: string }

/** Test hook: called before every step of provision/clear with the step's name; throwing injects a failure. */
export type FaultHook = (step: string) => void | Promise<void>

export class CabinetRollbackError extends BaseError<'cabinet_operation_failed'> {
  override name = 'CabinetRollbackError'
  constructor(operation: string, step: string, cause: unknown) {
    super('cabinet_operation_failed', `Cabinet ${operation} failed at step ${step}; vault, registry and agent map were rolled back.`, { cause })
  }
}

export type CabinetServiceOptions = {
  db: Kysely<Database>
  vault: Vault
  store: CabinetStore
  events: EventSink
  /** After a committed provision or clear (this replica's exported files are rewritten). */
  onChange?: () => Promise<void>
  /** Live replicas and unlocked ones (`UnlockPropagation.counts`); default: this one alone. */
  replicaCounts?: (() => Promise<{ live: number; unlocked: number }>) | undefined
  now?: () => number
  faults?: FaultHook
}

/**
 * Company cabinets (seed 000 §2.4, §3.3): eight secp256k1 wallets per company, 16 vault entries, a public
 * registry block and the soldiers' addresses in the agent map, all in the deployment's database, so
 * every replica answers the same. Provision and clear are one database transaction each: a failure at any step
 * rolls it back (the seed's "restored from a pre-operation snapshot"). The cabinet event is written after the
 * commit (the catalogue is a log file plus its own index, outside the transaction); when it cannot be written,
 * a compensating transaction puts back the rows the operation changed, so the operation still has no effect.
 * Two replicas provisioning one company at once: one block insert wins; the other transaction rolls back and
 * answers as the idempotent "provision again".
 */
export class CabinetService {
  readonly #db: Kysely<Database>
  readonly #vault: Vault
  readonly #store: CabinetStore
  readonly #events: EventSink
  readonly #now: () => number
  readonly #onChange: (() => Promise<void>) | undefined
  readonly #replicaCounts: (() => Promise<{ live: number; unlocked: number }>) | undefined
  /** Test hook (failure injection); never set in production wiring. */
  faults: FaultHook | undefined
  #queue: Promise<unknown> = Promise.resolve()

  constructor(options: CabinetServiceOptions) {
    this.#db = options.db
    this.#vault = options.vault
    this.#store = options.store
    this.#events = options.events
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.#onChange = options.onChange
    this.#replicaCounts = options.replicaCounts
    this.faults = options.faults
  }

  async preflight(company: string): Promise<Preflight> {
    const block = await this.#store.block(company)
    const agents = await this.#store.agentsOf(company)
    const soldiersWithAddress = SOLDIER_ROLES.filter((role) => agents.get(agentIdFor(company, role))?.address).length
    const replicas = (await this.#replicaCounts?.()) ?? { live: 1, unlocked: this.#vault.isUnlocked() ? 1 : 0 }
    return {
      company,
      exists: block !== undefined,
      vault_unlocked: this.#vault.isUnlocked(),
      soldiers_with_address: soldiersWithAddress,
      members_total: block?.members.length ?? 0,
      replicas_live: replicas.live,
      replicas_unlocked: replicas.unlocked,
    }
  }

  /**
   * The companies that have a cabinet (at most `limit`, by name): `/boardroom` offers them. Their rosters are public
   * by name (`GET /cabinet/{co}`); the list tells a signed-in user which names to try.
   */
  companies(limit = 100): Promise<string[]> {
    return this.#store.companies(limit)
  }

  /** Public roster; 404 `cabinet_not_found` when the company has no registry block. */
  async roster(company: string): Promise<Roster> {
    const block = await this.#store.block(company)
    if (!block) throw new ShadowError('cabinet_not_found', `No cabinet for company ${company}.`)
    return toRoster(block)
  }

  provision(company: string): Promise<ProvisionResult> {
    return this.#serialised(() => this.#provision(company))
  }

  clear(company: string): Promise<ClearResult> {
    return this.#serialised(() => this.#clear(company))
  }

  /** Signs `message` (EIP-191) as the member; the key is decrypted only inside this call. */
  async sign(agentId: string, message: string): Promise<SignResult> {
    const member = await this.#member(agentId)
    const signature = await this.#vault.withSecret(member.vault_pk_id, async (key) => {
      const account = privateKeyToAccount(toHex(key))
      return account.signMessage({ message })
    })
    if (!signature) throw new ShadowError('agent_not_found', `No key in the vault for ${agentId}.`)
    const recovered = await recoverMessageAddress({ message, signature })
    if (getAddress(recovered) !== getAddress(member.address)) {
      throw new BaseError('vault_integrity_error', 'The vault key does not match the registered member address.')
    }
    return { address: member.address, signature }
  }

  /** The emergency export: the only place a plaintext key leaves the vault. */
  async releaseKey(agentId: string): Promise<ReleasedKey> {
    const member = await this.#member(agentId)
    const privateKey = await this.#vault.withSecret(member.vault_pk_id, (key) => toHex(key))
    if (!privateKey) throw new ShadowError('agent_not_found', `No key in the vault for ${agentId}.`)
    return {
      agent_id: agentId,
      address: member.address,
      private_key: privateKey,
      warning: 'This key is now outside the vault. Move any funds and treat the address as compromised.',
    }
  }

  async #member(agentId: string): Promise<RegistryMember> {
    this.#vault.requireUnlocked() // 423 while locked, before anything else
    const parsed = parseCabinetAgentId(agentId)
    const member = parsed && (await this.#store.block(parsed.company))?.members.find((m) => m.entity_id === agentId)
    if (!member) throw new ShadowError('agent_not_found', `Unknown cabinet member ${agentId}.`)
    return member
  }

  async #provision(company: string): Promise<ProvisionResult> {
    this.#vault.requireUnlocked()
    const existing = await this.#store.block(company)
    if (existing) return this.#provisionedAgain(existing)
    let lost: RegistryBlock | undefined
    const result = await this.#transaction('provision', company, async (trx, step) => {
      const members: RegistryMember[] = []
      for (const spec of CABINET_MEMBERS) {
        const agentId = agentIdFor(company, spec.role)
        await step(`mint:${spec.role}`)
        const key = Buffer.from(generatePrivateKey().slice(2), 'hex')
        const address = privateKeyToAccount(toHex(key)).address
        await step(`vault.put:${pkEntryId(agentId)}`)
        await this.#vault.put(pkEntryId(agentId), key, PRIVATE_KEY_CONTEXT, trx)
        key.fill(0)
        await step(`vault.put:${addressEntryId(agentId)}`)
        await this.#vault.put(addressEntryId(agentId), address, PUBLIC_ADDRESS_CONTEXT, trx)
        members.push({ role: spec.role, label: spec.label, address, entity_id: agentId, boardroom_weight: spec.boardroom_weight, vault_pk_id: pkEntryId(agentId) })
      }
      const block: RegistryBlock = { company, provisioned_at: this.#now(), members }
      await step('registry.write')
      if (!(await this.#store.insertBlock(block, trx))) {
        lost = await this.#store.block(company, trx)
        throw new ProvisionRace()
      }
      await step('agent_map.write')
      for (const m of members) if (m.role !== 'ceo') await this.#store.setAgent(m.entity_id, { company, role: m.role, address: m.address }, trx)
      await step('event.provisioned')
      return block
    }, (block) => ({ kind: 'admin.cabinet.provisioned', payload: provisionedPayload(block, true) })).catch(async (error: unknown) => {
      // another replica's provision of the same company committed first: ours rolled back; answer as "again"
      if (error instanceof CabinetRollbackError && error.cause instanceof ProvisionRace) return undefined
      throw error
    })
    if (result) return provisionResult(result, true)
    const winner = lost ?? (await this.#store.block(company))
    if (!winner) throw new ShadowError('cabinet_not_found', `No cabinet for company ${company}.`)
    return this.#provisionedAgain(winner)
  }

  async #provisionedAgain(existing: RegistryBlock): Promise<ProvisionResult> {
    await this.#events.emit({ kind: 'admin.cabinet.provisioned', payload: provisionedPayload(existing, false) })
    return provisionResult(existing, false)
  }

  async #clear(company: string): Promise<ClearResult> {
    this.#vault.requireUnlocked()
    const block = await this.#store.block(company)
    if (!block) throw new ShadowError('cabinet_not_found', `No cabinet for company ${company}.`)
    const deleted = await this.#transaction('clear', company, async (trx, step) => {
      let count = 0
      for (const m of block.members) {
        for (const id of [pkEntryId(m.entity_id), addressEntryId(m.entity_id)]) {
          await step(`vault.delete:${id}`)
          if (await this.#vault.delete(id, trx)) count++
        }
      }
      await step('registry.write')
      // cleared meanwhile through another replica: nothing of ours to commit
      if (!(await this.#store.deleteBlock(company, trx))) throw new ShadowError('cabinet_not_found', `No cabinet for company ${company}.`)
      await step('agent_map.write')
      for (const [id, entry] of await this.#store.agentsOf(company, trx)) if (entry.role !== 'ceo') await this.#store.setAgent(id, { ...entry, address: null }, trx)
      await step('event.cleared')
      return count
    }, (count) => ({ kind: 'admin.cabinet.cleared', payload: { company, vault_entries_deleted: count } }))
    return { company, cleared: true, vault_entries_deleted: deleted }
  }

  /**
   * Runs `body` in one transaction (a thrown error rolls every write back), then writes the event. The rows
   * the operation may change (the company's vault entries, registry block and agent-map rows) are read first,
   * inside the transaction; when the event cannot be written they are put back by a second transaction.
   */
  async #transaction<T>(
    operation: string,
    company: string,
    body: (trx: Kysely<Database>, step: (name: string) => Promise<void>) => Promise<T>,
    event: (result: T) => Parameters<EventSink['emit']>[0],
  ): Promise<T> {
    let current = 'start'
    const step = async (name: string) => {
      current = name
      await this.faults?.(name)
    }
    let before: Snapshot | undefined
    let result: T
    try {
      result = await this.#db.transaction().execute(async (trx) => {
        before = await snapshotOf(trx, company)
        return body(trx, step)
      })
    } catch (error) {
      if (error instanceof ShadowError) throw error
      throw new CabinetRollbackError(operation, current, error)
    }
    try {
      await this.#events.emit(event(result))
    } catch (error) {
      await this.#db.transaction().execute((trx) => restoreSnapshot(trx, company, before!))
      await this.#onChange?.().catch(() => undefined)
      throw new CabinetRollbackError(operation, current, error)
    }
    await this.#onChange?.().catch(() => undefined) // the exported files follow; the database is the record
    return result
  }

  #serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task)
    this.#queue = run.catch(() => undefined)
    return run
  }
}

/** Thrown inside a provision's transaction when another replica's block for the company committed first. */
class ProvisionRace extends Error {}

type Snapshot = {
  entries: { entry_id: string; context: string; nonce: string; ciphertext: string; created_at: number }[]
  block: { company: string; provisioned_at: number; members: string } | undefined
  agents: { agent_id: string; company: string; role: string; address: string | null }[]
}

/** The rows of one company a provision or clear may change (the compensation's input). */
async function snapshotOf(db: Kysely<Database>, company: string): Promise<Snapshot> {
  return {
    entries: await db.selectFrom('vault_entries').selectAll().where('entry_id', 'in', memberEntryIds(company)).execute(),
    block: await db.selectFrom('cabinet_registry').selectAll().where('company', '=', company).executeTakeFirst(),
    agents: await db.selectFrom('agent_map').selectAll().where('company', '=', company).execute(),
  }
}

async function restoreSnapshot(db: Kysely<Database>, company: string, snapshot: Snapshot): Promise<void> {
  await db.deleteFrom('vault_entries').where('entry_id', 'in', memberEntryIds(company)).execute()
  for (const row of snapshot.entries) await db.insertInto('vault_entries').values(row).execute()
  await db.deleteFrom('cabinet_registry').where('company', '=', company).execute()
  if (snapshot.block) await db.insertInto('cabinet_registry').values(snapshot.block).execute()
  await db.deleteFrom('agent_map').where('company', '=', company).execute()
  for (const row of snapshot.agents) await db.insertInto('agent_map').values(row).execute()
}

/** The 16 vault entry ids of a company's cabinet. */
function memberEntryIds(company: string): string[] {
  return CABINET_MEMBERS.flatMap((m) => [pkEntryId(agentIdFor(company, m.role)), addressEntryId(agentIdFor(company, m.role))])
}

function toRoster(block: RegistryBlock): Roster {
  return {
    company: block.company,
    members: block.members.map((m) => ({ role: m.role, label: m.label, address: m.address, entity_id: m.entity_id, boardroom_weight: m.boardroom_weight })),
  }
}

/** `CabinetProvisionedPayload` of asyncapi/events.yaml. */
function provisionedPayload(block: RegistryBlock, created: boolean) {
  return { company: block.company, ceo_address: block.members[0]!.address, soldier_count: block.members.length - 1, created }
}

function provisionResult(block: RegistryBlock, created: boolean): ProvisionResult {
  const { members } = toRoster(block)
  return { company: block.company, created, ceo: members[0]!, soldiers: members.slice(1) }
}
