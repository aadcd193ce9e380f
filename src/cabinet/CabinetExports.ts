import type { CabinetFiles } from './CabinetFiles.js'
import type { CabinetStore } from './CabinetStore.js'

/**
 * Keeps this replica's registry and agent-map files (the seed's files, seed 000 §2.4) current from the
 * database: `refresh` rewrites both from `CabinetStore`. Called after this replica's own provision/clear, at
 * start, and on every change the database's change feed reports for `cabinet_registry`/`agent_map` (any
 * replica's write). Calls coalesce: while a rewrite runs, further calls share one rewrite after it, which reads
 * the database afresh, so the files end as the database is, whatever the order of notifications.
 */
export class CabinetExports {
  #running: Promise<void> | undefined
  #next: Promise<void> | undefined

  constructor(
    private readonly store: CabinetStore,
    private readonly files: CabinetFiles,
  ) {}

  refresh(): Promise<void> {
    if (this.#next) return this.#next
    if (!this.#running) return (this.#running = this.#write().finally(() => (this.#running = undefined)))
    const after = this.#running.catch(() => undefined)
    this.#next = after.then(() => {
      this.#next = undefined
      return this.refresh()
    })
    return this.#next
  }

  async #write(): Promise<void> {
    const [registry, agents] = await Promise.all([this.store.registry(), this.store.agentMap()])
    await this.files.writeRegistry(registry)
    await this.files.writeAgentMap(agents)
  }
}
