import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeJsonAtomic } from '../vault/writeFileAtomic.js'
import type { CabinetRole } from './members.js'

/** A member as kept in the registry file. `vault_pk_id` is internal and never part of the public roster. */
export type RegistryMember = {
  role: CabinetRole
  label: string
  address: string
  entity_id: string
  boardroom_weight: number
  vault_pk_id: string
}

export type RegistryBlock = { company: string; provisioned_at: number; members: RegistryMember[] }
/** Blocks by company name. A Map: company names come from clients (`constructor`, `__proto__` are names too). */
export type RegistryFile = { version: 1; companies: Map<string, RegistryBlock> }

export type AgentMapEntry = { company: string; role: CabinetRole; address: string | null }
/** Entries by agent id (a Map, for the same reason). */
export type AgentMapFile = { version: 1; agents: Map<string, AgentMapEntry> }

/** A JSON object's own entries as a Map (a key named like an Object.prototype member is just a key). */
const entries = <T>(record: Record<string, T> | undefined): Map<string, T> => new Map(Object.entries(record ?? {}))

/**
 * The production registry file (one public block per company) and the agent-map file (soldier addresses),
 * JSON in the data dir, always written atomically (temp + fsync + rename). The database holds both
 * (`CabinetStore`); these files are exports each replica rewrites from it (`CabinetExports`), and the files of
 * a data directory from before the database held them are read once, to import them. In memory the keyed parts are Maps;
 * on disk plain JSON objects (Object.fromEntries writes every key, `__proto__` included, as its own).
 */
export class CabinetFiles {
  readonly registryPath: string
  readonly agentMapPath: string

  constructor(dataDir: string) {
    this.registryPath = join(dataDir, 'cabinet_registry.json')
    this.agentMapPath = join(dataDir, 'agent_map.json')
  }

  async readRegistry(): Promise<RegistryFile> {
    const text = await readOptional(this.registryPath)
    return { version: 1, companies: entries(text === null ? undefined : (JSON.parse(text) as { companies?: Record<string, RegistryBlock> }).companies) }
  }

  async writeRegistry(file: RegistryFile): Promise<void> {
    await writeJsonAtomic(this.registryPath, { version: file.version, companies: Object.fromEntries(file.companies) }, 0o644)
  }

  async readAgentMap(): Promise<AgentMapFile> {
    const text = await readOptional(this.agentMapPath)
    return { version: 1, agents: entries(text === null ? undefined : (JSON.parse(text) as { agents?: Record<string, AgentMapEntry> }).agents) }
  }

  async writeAgentMap(file: AgentMapFile): Promise<void> {
    await writeJsonAtomic(this.agentMapPath, { version: file.version, agents: Object.fromEntries(file.agents) }, 0o644)
  }
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
