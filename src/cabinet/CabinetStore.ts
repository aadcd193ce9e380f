import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { AgentMapFile, RegistryBlock, RegistryFile, AgentMapEntry } from './CabinetFiles.js'
import type { CabinetRole } from './members.js'

type Db = Kysely<Database>

/**
 * The cabinet registry and the agent map in the deployment's database: tables `cabinet_registry`
 * (one block per company, members as JSON) and `agent_map` (soldier addresses). Every method takes the
 * database or a transaction of it, so a provision or clear writes them in the one transaction that also
 * writes the vault entries. Keyed results are Maps: company names and agent ids come from clients.
 */
export class CabinetStore {
  constructor(private readonly db: Db) {}

  async block(company: string, db: Db = this.db): Promise<RegistryBlock | undefined> {
    const row = await db.selectFrom('cabinet_registry').selectAll().where('company', '=', company).executeTakeFirst()
    return row ? toBlock(row) : undefined
  }

  /** The companies that have a cabinet, by name, at most `limit`. */
  async companies(limit: number, db: Db = this.db): Promise<string[]> {
    const rows = await db.selectFrom('cabinet_registry').select('company').orderBy('company').limit(limit).execute()
    return rows.map((r) => r.company)
  }

  async registry(db: Db = this.db): Promise<RegistryFile> {
    const rows = await db.selectFrom('cabinet_registry').selectAll().orderBy('company').execute()
    return { version: 1, companies: new Map(rows.map((r) => [r.company, toBlock(r)])) }
  }

  async agentMap(db: Db = this.db): Promise<AgentMapFile> {
    const rows = await db.selectFrom('agent_map').selectAll().orderBy('agent_id').execute()
    return { version: 1, agents: new Map(rows.map((r) => [r.agent_id, { company: r.company, role: r.role as CabinetRole, address: r.address }])) }
  }

  async agentsOf(company: string, db: Db = this.db): Promise<Map<string, AgentMapEntry>> {
    const rows = await db.selectFrom('agent_map').selectAll().where('company', '=', company).execute()
    return new Map(rows.map((r) => [r.agent_id, { company: r.company, role: r.role as CabinetRole, address: r.address }]))
  }

  /** Inserts the block; false when the company already has one (a concurrent provision through another replica won). */
  async insertBlock(block: RegistryBlock, db: Db = this.db): Promise<boolean> {
    const result = await db
      .insertInto('cabinet_registry')
      .values({ company: block.company, provisioned_at: block.provisioned_at, members: JSON.stringify(block.members) })
      .onConflict((oc) => oc.column('company').doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
  }

  async deleteBlock(company: string, db: Db = this.db): Promise<boolean> {
    const result = await db.deleteFrom('cabinet_registry').where('company', '=', company).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async setAgent(agentId: string, entry: AgentMapEntry, db: Db = this.db): Promise<void> {
    await db
      .insertInto('agent_map')
      .values({ agent_id: agentId, company: entry.company, role: entry.role, address: entry.address })
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({ company: entry.company, role: entry.role, address: entry.address }))
      .execute()
  }

  /** Imports the registry and agent-map files of an older data directory when the tables are empty (first start after the upgrade). */
  async importFiles(registry: RegistryFile, agents: AgentMapFile): Promise<{ companies: number; agents: number }> {
    return this.db.transaction().execute(async (trx) => {
      const any = await trx.selectFrom('cabinet_registry').select('company').limit(1).executeTakeFirst()
      const anyAgent = await trx.selectFrom('agent_map').select('agent_id').limit(1).executeTakeFirst()
      if (any || anyAgent) return { companies: 0, agents: 0 }
      for (const block of registry.companies.values()) await this.insertBlock(block, trx)
      for (const [id, entry] of agents.agents) await this.setAgent(id, entry, trx)
      return { companies: registry.companies.size, agents: agents.agents.size }
    })
  }
}

function toBlock(row: { company: string; provisioned_at: number; members: string }): RegistryBlock {
  return { company: row.company, provisioned_at: Number(row.provisioned_at), members: JSON.parse(row.members) as RegistryBlock['members'] }
}
