import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { Marketplace } from '../marketplace/Marketplace.js'
import { type MeteredModelServer, nsToMs } from '../cost/meter/index.js'
import { ulid } from '../marketplace/ulid.js'
import { cosineSimilarity } from './cosineSimilarity.js'

export type CoreAgentParameters = {
  db: Kysely<Database>
  marketplace: Marketplace
  embedModel: string
  /** Epoch seconds. */
  now: () => number
  /** How many of a wallet's most recent memories a search scans (bounds the work per search). */
  scanLimit?: number
}

export type RecalledMemory = { memory_id: string; agent: string | null; text: string; response: string; score: number; created_at: number }

/** Who calls, and the call's metered model server (its embeddings and generation are metered as one call). */
export type CoreAgentCall = { wallet: string; server: MeteredModelServer }

/**
 * `/coreagent` (seed 000 §4.5 "agent interaction and memory logging"): memories are logged with their
 * embedding (`SERVICE_LLM__MODELSERVER__EMBED_MODEL`) and searched by cosine similarity over the wallet's own
 * memories — those logged here and those `ingest` stored with `remember: true`. An interaction recalls the
 * closest memories into the agent's prompt and logs itself as a new memory.
 */
export class CoreAgent {
  constructor(private readonly p: CoreAgentParameters) {}

  private embed(text: string, call: CoreAgentCall) {
    return call.server.embed({ model: this.p.embedModel, input: text })
  }

  private async store(call: CoreAgentCall, row: { agent: string | null; model: string; prompt: string; response: string }, embedding: number[]): Promise<string> {
    const memoryId = `mem_${ulid()}`
    await this.p.db
      .insertInto('memories')
      .values({ memory_id: memoryId, wallet: call.wallet.toLowerCase(), embedding: JSON.stringify(embedding), created_at: this.p.now(), ...row })
      .execute()
    return memoryId
  }

  /** Logs a memory (its text is embedded as is). */
  async remember(input: { text: string; agent?: string | undefined }, call: CoreAgentCall) {
    if (input.agent !== undefined) await this.p.marketplace.agentContext(input.agent)
    const embedding = await this.embed(input.text, call)
    const memoryId = await this.store(call, { agent: input.agent ?? null, model: this.p.embedModel, prompt: input.text, response: '' }, embedding)
    return { memory_id: memoryId, dimensions: embedding.length }
  }

  /** The wallet's memories closest to `query`, best first. */
  async search(input: { query: string; limit?: number | undefined; agent?: string | undefined }, call: CoreAgentCall): Promise<RecalledMemory[]> {
    const vector = await this.embed(input.query, call)
    return this.nearest(vector, input.limit ?? 5, input.agent, call)
  }

  private async nearest(vector: number[], limit: number, agent: string | undefined, call: CoreAgentCall): Promise<RecalledMemory[]> {
    let query = this.p.db
      .selectFrom('memories')
      .select(['memory_id', 'agent', 'prompt', 'response', 'embedding', 'created_at'])
      .where('wallet', '=', call.wallet.toLowerCase())
    if (agent !== undefined) query = query.where('agent', '=', agent)
    const rows = await query.orderBy('created_at', 'desc').limit(this.p.scanLimit ?? 5000).execute()
    return rows
      .map((r) => ({
        memory_id: r.memory_id,
        agent: r.agent ?? null,
        text: r.prompt,
        response: r.response,
        created_at: Number(r.created_at),
        score: round(cosineSimilarity(vector, JSON.parse(r.embedding) as number[])),
      }))
      .sort((a, b) => b.score - a.score || b.created_at - a.created_at)
      .slice(0, limit)
  }

  /**
   * One turn with an agent: the prompt's closest memories (up to `recall`) go into the agent's instructions,
   * the answer comes from the model server, and the turn is logged as a memory of that agent (unless
   * `remember` is false).
   */
  async interact(input: { agent: string; prompt: string; recall?: number | undefined; remember?: boolean | undefined }, call: CoreAgentCall) {
    const context = await this.p.marketplace.agentContext(input.agent)
    const promptVector = await this.embed(input.prompt, call)
    const recalled = (input.recall ?? 3) > 0 ? await this.nearest(promptVector, input.recall ?? 3, undefined, call) : []
    const memoryText = recalled.map((m) => `- ${m.text}${m.response ? ` → ${m.response}` : ''}`).join('\n')
    const system = recalled.length > 0 ? `${context.instructions}\n\nWhat you remember that may be relevant:\n${memoryText}` : context.instructions
    const reply = await call.server.generate({ model: context.model, prompt: input.prompt, system })
    const memoryId =
      input.remember === false
        ? undefined
        : await this.store(call, { agent: context.agent, model: reply.model, prompt: input.prompt, response: reply.response }, promptVector)
    return {
      agent: context.agent,
      model: reply.model,
      response: reply.response,
      recalled,
      eval_count: reply.eval_count ?? 0,
      total_duration_ms: nsToMs(reply.total_duration),
      ...(memoryId ? { memory_id: memoryId } : {}),
    }
  }
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6
}
