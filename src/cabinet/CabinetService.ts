import { getAddress, type Hex, recoverMessageAddress, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { EventSink } from '../catalogue/EventSink.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { BaseError } from '../shared/errors/BaseError.js'
import type { Vault } from '../vault/Vault.js'
import type { CabinetFiles, RegistryBlock, RegistryMember } from './CabinetFiles.js'
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
}
export type SignResult = { address: string; signature: Hex }
export type ReleasedKey = { agent_id: string; address: string; private_key: Hex; warning: string }

/** Test hook: called before every step of provision/clear with the step's name; throwing injects a failure. */
export type FaultHook = (step: string) => void | Promise<void>

export class CabinetRollbackError extends BaseError<'cabinet_operation_failed'> {
  override name = 'CabinetRollbackError'
  constructor(operation: string, step: string, cause: unknown) {
    super('cabinet_operation_failed', `Cabinet ${operation} failed at step ${step}; vault, registry and agent map were restored.`, { cause })
  }
}

export type CabinetServiceOptions = {
  vault: Vault
  files: CabinetFiles
  events: EventSink
  now?: () => number
  faults?: FaultHook
}

/**
 * Company cabinets (seed 000 §2.4, §3.3): eight secp256k1 wallets per company, 16 vault entries, a public
 * registry block and the soldiers' addresses in the agent map. Provision and clear are all-or-nothing: the
 * vault file, registry file and agent-map file are snapshotted first and restored on any failure. One
 * operation at a time per process (an in-process queue).
 */
export class CabinetService {
  readonly #vault: Vault
  readonly #files: CabinetFiles
  readonly #events: EventSink
  readonly #now: () => number
  /** Test hook (failure injection); never set in production wiring. */
  faults: FaultHook | undefined
  #queue: Promise<unknown> = Promise.resolve()

  constructor(options: CabinetServiceOptions) {
    this.#vault = options.vault
    this.#files = options.files
    this.#events = options.events
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.faults = options.faults
  }

  async preflight(company: string): Promise<Preflight> {
    const block = (await this.#files.readRegistry()).companies.get(company)
    const agents = (await this.#files.readAgentMap()).agents
    const soldiersWithAddress = SOLDIER_ROLES.filter((role) => agents.get(agentIdFor(company, role))?.address).length
    return {
      company,
      exists: block !== undefined,
      vault_unlocked: this.#vault.isUnlocked(),
      soldiers_with_address: soldiersWithAddress,
      members_total: block?.members.length ?? 0,
    }
  }

  /** Public roster; 404 `cabinet_not_found` when the company has no registry block. */
  async roster(company: string): Promise<Roster> {
    const block = (await this.#files.readRegistry()).companies.get(company)
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
    this.#vault.list('') // 423 while locked, before anything else
    const parsed = parseCabinetAgentId(agentId)
    const member = parsed && (await this.#files.readRegistry()).companies.get(parsed.company)?.members.find((m) => m.entity_id === agentId)
    if (!member) throw new ShadowError('agent_not_found', `Unknown cabinet member ${agentId}.`)
    return member
  }

  async #provision(company: string): Promise<ProvisionResult> {
    this.#vault.list('')
    const existing = (await this.#files.readRegistry()).companies.get(company)
    if (existing) {
      await this.#events.emit({ kind: 'admin.cabinet.provisioned', payload: provisionedPayload(existing, false) })
      return provisionResult(existing, false)
    }
    return this.#transaction('provision', async (step) => {
      const members: RegistryMember[] = []
      for (const spec of CABINET_MEMBERS) {
        const agentId = agentIdFor(company, spec.role)
        await step(`mint:${spec.role}`)
        const key = Buffer.from(generatePrivateKey().slice(2), 'hex')
        const address = privateKeyToAccount(toHex(key)).address
        await step(`vault.put:${pkEntryId(agentId)}`)
        await this.#vault.put(pkEntryId(agentId), key, PRIVATE_KEY_CONTEXT)
        key.fill(0)
        await step(`vault.put:${addressEntryId(agentId)}`)
        await this.#vault.put(addressEntryId(agentId), address, PUBLIC_ADDRESS_CONTEXT)
        members.push({ role: spec.role, label: spec.label, address, entity_id: agentId, boardroom_weight: spec.boardroom_weight, vault_pk_id: pkEntryId(agentId) })
      }
      const block: RegistryBlock = { company, provisioned_at: this.#now(), members }
      await step('registry.write')
      const registry = await this.#files.readRegistry()
      await this.#files.writeRegistry({ ...registry, companies: new Map(registry.companies).set(company, block) })
      await step('agent_map.write')
      const map = await this.#files.readAgentMap()
      const agents = new Map(map.agents)
      for (const m of members) if (m.role !== 'ceo') agents.set(m.entity_id, { company, role: m.role, address: m.address })
      await this.#files.writeAgentMap({ ...map, agents })
      await step('event.provisioned')
      await this.#events.emit({ kind: 'admin.cabinet.provisioned', payload: provisionedPayload(block, true) })
      return provisionResult(block, true)
    })
  }

  async #clear(company: string): Promise<ClearResult> {
    this.#vault.list('')
    const block = (await this.#files.readRegistry()).companies.get(company)
    if (!block) throw new ShadowError('cabinet_not_found', `No cabinet for company ${company}.`)
    return this.#transaction('clear', async (step) => {
      let deleted = 0
      for (const m of block.members) {
        for (const id of [pkEntryId(m.entity_id), addressEntryId(m.entity_id)]) {
          await step(`vault.delete:${id}`)
          if (await this.#vault.delete(id)) deleted++
        }
      }
      await step('registry.write')
      const registry = await this.#files.readRegistry()
      const companies = new Map(registry.companies)
      companies.delete(company)
      await this.#files.writeRegistry({ ...registry, companies })
      await step('agent_map.write')
      const map = await this.#files.readAgentMap()
      const agents = new Map(map.agents)
      for (const role of SOLDIER_ROLES) {
        const id = agentIdFor(company, role)
        const entry = agents.get(id)
        if (entry) agents.set(id, { ...entry, address: null })
      }
      await this.#files.writeAgentMap({ ...map, agents })
      await step('event.cleared')
      await this.#events.emit({ kind: 'admin.cabinet.cleared', payload: { company, vault_entries_deleted: deleted } })
      return { company, cleared: true, vault_entries_deleted: deleted }
    })
  }

  async #transaction<T>(operation: string, body: (step: (name: string) => Promise<void>) => Promise<T>): Promise<T> {
    const vaultSnapshot = await this.#vault.snapshot()
    const filesSnapshot = await this.#files.snapshot()
    let current = 'start'
    const step = async (name: string) => {
      current = name
      await this.faults?.(name)
    }
    try {
      return await body(step)
    } catch (error) {
      await this.#vault.restore(vaultSnapshot)
      await this.#files.restore(filesSnapshot)
      throw new CabinetRollbackError(operation, current, error)
    }
  }

  #serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task)
    this.#queue = run.catch(() => undefined)
    return run
  }
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
