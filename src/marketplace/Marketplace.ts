import type { Kysely } from 'kysely'
import type { ChatChunk, GenerateChunk, ModelOptions } from '../../generated/modelserver/types.gen.js'
import { CachedTable } from '../cache/CachedTable.js'
import type { ChangeFeed } from '../cache/ChangeFeed.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/isUniqueViolation.js'
import { precompiledQuery } from '../db/precompiledQuery.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { type AgentDefinition, agentDefinitions } from './agents.js'
import { GenerationBudgetSpentError, type MeteredModelServer, nsToMs } from '../cost/meter/index.js'
import { ulid } from './ulid.js'

export class MarketplaceError extends BaseError<'agent_not_found' | 'cabinet_not_found'> {
  override name = 'MarketplaceError'
}

export type RosterMember = { role: string; label: string; address: string | null; entity_id: string; boardroom_weight: number }

export type MarketplaceParameters = {
  db: Kysely<Database>
  chatModel: string
  embedModel: string
  /** Epoch seconds. */
  now: () => number
  /** Public roster of a company's cabinet (`undefined` = none). */
  roster?: ((company: string) => Promise<RosterMember[] | undefined>) | undefined
  /**
   * Changes of `agent_revisions` by any writer: the registry (every agent's current revision) is then kept in
   * memory until one is reported. Without it every read goes to the database.
   */
  changeFeed?: ChangeFeed | undefined
  onCacheEvent?: ((event: 'hit' | 'miss' | 'invalidation') => void) | undefined
}

type Revision = { revision: number; instructions: string; model: string }

/**
 * Who calls, and the model server of this call: the meter's (`src/cost/meter/`), which caps and counts every
 * generation of the call against the call's one budget and ends it when the client goes or its payment's time
 * is up.
 */
export type MarketplaceCall = { wallet?: string | undefined; server: MeteredModelServer }

/** Longest wait of an evolve for every instance to confirm it (`ChangeFeed.barrier`). */
const BARRIER_TIMEOUT_MS = 1_000

/** The most tokens one member's vote in `convene` may take (its vote and one reason; the reason is cut at 500 characters). */
const VOTE_MAX_TOKENS = 96

/** Inserts of one evolve before a run of concurrent evolves of the same agent makes it give up. */
const EVOLVE_ATTEMPTS = 8

/** Usage and durations (ms) of a finished generation: the final chunk of every gateway stream carries them. */
export type GenerationUsage = {
  done_reason: string
  prompt_eval_count: number
  eval_count: number
  total_duration_ms: number
  load_duration_ms: number
  prompt_eval_duration_ms: number
  eval_duration_ms: number
}

/** Lines of the gateway's NDJSON streams (`LlmChatChunk`, `LlmCompletionChunk`, `MarketplaceCallChunk`). */
export type LlmChatChunk = { model: string; created_at: string; message: { role: 'assistant'; content: string }; done: boolean } & Partial<GenerationUsage>
export type LlmCompletionChunk = { model: string; created_at: string; response: string; done: boolean } & Partial<GenerationUsage>
export type MarketplaceCallChunk = { agent: string } & LlmCompletionChunk

/** A stream of chunk batches (one batch per model-server read; see `readNdjsonBatches`). */
export type ChunkStream<T> = AsyncGenerator<T[]>

export function usageOf(chunk: ChatChunk | GenerateChunk): GenerationUsage {
  return {
    done_reason: chunk.done_reason ?? 'stop',
    prompt_eval_count: chunk.prompt_eval_count ?? 0,
    eval_count: chunk.eval_count ?? 0,
    total_duration_ms: nsToMs(chunk.total_duration),
    load_duration_ms: nsToMs(chunk.load_duration),
    prompt_eval_duration_ms: nsToMs(chunk.prompt_eval_duration),
    eval_duration_ms: nsToMs(chunk.eval_duration),
  }
}

async function* mapBatches<A, B>(source: AsyncGenerator<A[]>, map: (a: A) => B): AsyncGenerator<B[]> {
  try {
    for await (const batch of source) yield batch.map(map)
  } finally {
    // The consumer went away early: close the model-server stream too.
    await source.return(undefined)
  }
}

/**
 * The marketplace and cost endpoints' core (seed 000 §4.2, §4.5): agents, calls through an agent, prompt
 * ingestion with optional memory, instruction evolution, the coordinator and the boardroom. Every model call
 * goes to the model server through the call's metered model server (`MarketplaceCall.server`); its failures
 * surface as `modelserver_unavailable`.
 */
export class Marketplace {
  /** The current revision of every agent (one query, built once; see `currentAll`). */
  private readonly currentRevisions: () => Promise<{ agent: string; revision: number; instructions: string; model: string }[]>
  /** `readRegistry`'s result, kept until `agent_revisions` changes (when there is a change feed). */
  private readonly registry: CachedTable<ReadonlyMap<string, Readonly<Revision>>> | undefined

  constructor(private readonly p: MarketplaceParameters) {
    this.currentRevisions = precompiledQuery(p.db, 0, (db) =>
      db
        .selectFrom('agent_revisions as r')
        .select(['r.agent', 'r.revision', 'r.instructions', 'r.model'])
        .where('r.agent', 'in', agentDefinitions.map((a) => a.id))
        .where('r.revision', '=', (eb) =>
          eb
            .selectFrom('agent_revisions as l')
            .select((l) => l.fn.max('l.revision').as('m'))
            .whereRef('l.agent', '=', 'r.agent'),
        ),
    )
    this.registry = p.changeFeed
      ? new CachedTable({ feed: p.changeFeed, table: 'agent_revisions', load: () => this.readRegistry(), onEvent: p.onCacheEvent })
      : undefined
  }

  /** Stops following registry changes. */
  close(): void {
    this.registry?.close()
  }

  private definition(id: string): AgentDefinition {
    const agent = agentDefinitions.find((a) => a.id === id)
    if (!agent) throw new MarketplaceError('agent_not_found', `no agent ${id}`)
    return agent
  }

  /**
   * An agent's current revision: from the registry (memory, when cached). `fresh` reads the database itself,
   * for a write that must build on the latest committed revision (a cached registry may be a notification
   * behind another instance's evolve).
   */
  private async current(agent: AgentDefinition, { fresh = false } = {}): Promise<Revision> {
    if (this.registry && !fresh) {
      return (await this.registry.get()).get(agent.id) ?? { revision: 1, instructions: agent.instructions, model: this.p.chatModel }
    }
    const row = await this.p.db
      .selectFrom('agent_revisions')
      .selectAll()
      .where('agent', '=', agent.id)
      .orderBy('revision', 'desc')
      .limit(1)
      .executeTakeFirst()
    return row
      ? { revision: Number(row.revision), instructions: row.instructions, model: row.model }
      : { revision: 1, instructions: agent.instructions, model: this.p.chatModel }
  }

  /**
   * The current revision of every agent, from memory when cached: it is dropped as soon as the database
   * reports a change to `agent_revisions` (an evolution on any instance, or any other writer).
   */
  private currentAll(): Promise<ReadonlyMap<string, Readonly<Revision>>> {
    return this.registry ? this.registry.get() : this.readRegistry()
  }

  /** Every agent's current revision in one query (the list would otherwise cost a round trip per agent). */
  private async readRegistry(): Promise<ReadonlyMap<string, Readonly<Revision>>> {
    const rows = await this.currentRevisions()
    return new Map(rows.map((row) => [row.agent, Object.freeze({ revision: Number(row.revision), instructions: row.instructions, model: row.model })]))
  }

  private async view(agent: AgentDefinition) {
    return viewOf(agent, await this.current(agent))
  }

  /** An agent's current model and instructions (for callers that build their own prompt, e.g. `/coreagent`). */
  async agentContext(id: string): Promise<{ agent: string; model: string; instructions: string }> {
    const agent = this.definition(id)
    const current = await this.current(agent)
    return { agent: agent.id, model: current.model, instructions: current.instructions }
  }

  /** True when `id` names a marketplace agent (agent ids are model names on `/llm/v1`). */
  isAgent(id: string): boolean {
    return agentDefinitions.some((a) => a.id === id)
  }

  async listAgents() {
    const current = await this.currentAll()
    // Every revision is known here: the views are built directly (no promise per agent).
    return agentDefinitions.map((a) => viewOf(a, current.get(a.id) ?? { revision: 1, model: this.p.chatModel }))
  }

  async getAgent(id: string) {
    return this.view(this.definition(id))
  }

  async callAgent(input: { agent: string; prompt: string; model?: string | undefined }, call: MarketplaceCall) {
    const agent = this.definition(input.agent)
    const current = await this.current(agent)
    const model = input.model ?? current.model
    const reply = await call.server.generate({ model, prompt: input.prompt, system: current.instructions })
    return {
      agent: agent.id,
      model: reply.model,
      response: reply.response,
      eval_count: reply.eval_count ?? 0,
      total_duration_ms: nsToMs(reply.total_duration),
    }
  }

  /** `callAgent` streamed: opened (a refusal is thrown before any chunk), then one batch per model-server read. */
  async callAgentStream(input: { agent: string; prompt: string; model?: string | undefined }, call: MarketplaceCall): Promise<ChunkStream<MarketplaceCallChunk>> {
    const agent = this.definition(input.agent)
    const current = await this.current(agent)
    const upstream = await call.server.generateStream({ model: input.model ?? current.model, prompt: input.prompt, system: current.instructions })
    return mapBatches(upstream, (c) => ({ agent: agent.id, ...completionChunk(c) }))
  }

  async ingest(input: { prompt: string; model: string; remember?: boolean | undefined }, call: MarketplaceCall) {
    const reply = await call.server.generate({ model: input.model, prompt: input.prompt })
    if (!input.remember) return { model: reply.model, response: reply.response, stored: false }
    const embedding = await call.server.embed({ model: this.p.embedModel, input: `${input.prompt}\n${reply.response}` })
    const memoryId = `mem_${ulid()}`
    await this.p.db
      .insertInto('memories')
      .values({
        memory_id: memoryId,
        wallet: call.wallet?.toLowerCase() ?? null,
        model: reply.model,
        prompt: input.prompt,
        response: reply.response,
        embedding: JSON.stringify(embedding),
        created_at: this.p.now(),
      })
      .execute()
    return { model: reply.model, response: reply.response, stored: true, memory_id: memoryId }
  }

  async evolve(id: string, input: { goal: string; model?: string | undefined }, call: MarketplaceCall) {
    const agent = this.definition(id)
    const current = await this.current(agent, { fresh: true })
    const model = input.model ?? current.model
    const reply = await call.server.generate({
      model,
      system: 'Rewrite the instructions of an assistant. Answer with the new instructions only.',
      prompt: `Current instructions:\n${current.instructions}\n\nGoal:\n${input.goal}\n\nNew instructions:`,
    })
    const instructions = reply.response.trim() || current.instructions
    // The next revision number; a concurrent evolve of the same agent may take it first (the primary key
    // refuses the second insert), so the number is re-read and the insert retried: both evolves are kept.
    let revision = current.revision + 1
    for (let attempt = 1; ; attempt++) {
      try {
        await this.p.db
          .insertInto('agent_revisions')
          .values({ agent: agent.id, revision, instructions, model: reply.model, created_at: this.p.now(), wallet: call.wallet?.toLowerCase() ?? null })
          .execute()
        break
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= EVOLVE_ATTEMPTS) throw error
        revision = (await this.current(agent, { fresh: true })).revision + 1
      }
    }
    // This instance shows the new revision before answering; the others when the change feed reports it,
    // and the barrier waits (bounded) until every instance has been told.
    this.registry?.invalidate()
    if (this.registry) await this.p.changeFeed!.barrier(BARRIER_TIMEOUT_MS)
    return { agent: agent.id, revision, model: reply.model, instructions, eval_count: reply.eval_count ?? 0 }
  }

  /**
   * Each agent works on its part of the goal, in turn. The call's budget (what its payment pays for) is shared
   * evenly among the agents still to answer; once it is spent the task stops there: `status: budget_spent`,
   * `agents` the ones that answered.
   */
  async coordinate(input: { goal: string; agents?: string[] | undefined; model?: string | undefined }, call: MarketplaceCall) {
    const agents = (input.agents ?? agentDefinitions.map((a) => a.id)).map((id) => this.definition(id))
    const started = Date.now()
    const parts: string[] = []
    const answered: string[] = []
    let evalCount = 0
    let model = input.model ?? this.p.chatModel
    let status: 'completed' | 'budget_spent' = 'completed'
    for (const [i, agent] of agents.entries()) {
      const current = await this.current(agent)
      let reply
      try {
        reply = await call.server.generate({ model: input.model ?? current.model, system: current.instructions, prompt: `Your part of this goal: ${input.goal}` }, { of: agents.length - i })
      } catch (error) {
        if (!(error instanceof GenerationBudgetSpentError) || answered.length === 0) throw error
        status = 'budget_spent'
        break
      }
      model = reply.model
      evalCount += reply.eval_count ?? 0
      answered.push(agent.id)
      parts.push(`${agent.id}: ${reply.response.trim()}`)
    }
    return {
      task_id: `task_${ulid()}`,
      status,
      agents: answered,
      model,
      result: parts.join('\n'),
      eval_count: evalCount,
      total_duration_ms: Date.now() - started,
    }
  }

  async ceoStatus(company: string) {
    const roster = (await this.p.roster?.(company)) ?? undefined
    if (!roster) return { company, ceo: null, soldiers: [] as RosterMember[] }
    return { company, ceo: roster.find((m) => m.role === 'ceo') ?? null, soldiers: roster.filter((m) => m.role !== 'ceo') }
  }

  /**
   * Each member of the company's cabinet votes on the motion, in turn, sharing the call's budget evenly among
   * the members still to vote; a member left without a token (the payment is spent) abstains, saying so.
   */
  async convene(input: { company: string; motion: string; model?: string | undefined }, call: MarketplaceCall) {
    const roster = await this.p.roster?.(input.company)
    if (!roster || roster.length === 0) throw new MarketplaceError('cabinet_not_found', `no cabinet for company ${input.company}`)
    const model = input.model ?? this.p.chatModel
    const votes: { role: string; weight: number; vote: 'for' | 'against' | 'abstain'; reason: string }[] = []
    let usedModel = model
    for (const [i, member] of roster.entries()) {
      let reply
      try {
        reply = await call.server.generate(
          {
            model,
            system: `You are the ${member.label} of ${input.company}. Vote FOR, AGAINST or ABSTAIN, then give one reason.`,
            prompt: `Motion: ${input.motion}\nYour vote:`,
            // a vote and one reason: eight members answering at length would keep the caller waiting for minutes
            options: { temperature: 0, num_predict: VOTE_MAX_TOKENS } satisfies ModelOptions,
          },
          { of: roster.length - i },
        )
      } catch (error) {
        if (!(error instanceof GenerationBudgetSpentError) || votes.length === 0) throw error
        votes.push({ role: member.role, weight: member.boardroom_weight, vote: 'abstain', reason: 'no tokens left of this call’s payment' })
        continue
      }
      usedModel = reply.model
      votes.push({ role: member.role, weight: member.boardroom_weight, vote: parseVote(reply.response), reason: reply.response.trim().slice(0, 500) })
    }
    const sum = (v: string) => votes.filter((x) => x.vote === v).reduce((n, x) => n + x.weight, 0)
    const weightFor = sum('for')
    return {
      company: input.company,
      motion: input.motion,
      carried: weightFor > 50,
      weight_for: weightFor,
      weight_against: sum('against'),
      weight_abstain: sum('abstain'),
      model: usedModel,
      votes,
    }
  }

  async chat(input: { model?: string | undefined; messages: { role: 'system' | 'user' | 'assistant'; content: string }[]; options?: ModelOptions | undefined }, call: MarketplaceCall) {
    const reply = await call.server.chat({ model: input.model ?? this.p.chatModel, messages: input.messages, options: input.options })
    return {
      model: reply.model,
      message: { role: 'assistant' as const, content: reply.message.content },
      done_reason: reply.done_reason ?? 'stop',
      prompt_eval_count: reply.prompt_eval_count ?? 0,
      eval_count: reply.eval_count ?? 0,
      total_duration_ms: nsToMs(reply.total_duration),
    }
  }

  async completion(input: { model?: string | undefined; prompt: string; system?: string | undefined; options?: ModelOptions | undefined }, call: MarketplaceCall) {
    const reply = await call.server.generate({ model: input.model ?? this.p.chatModel, prompt: input.prompt, system: input.system, options: input.options })
    return {
      model: reply.model,
      response: reply.response,
      done_reason: reply.done_reason ?? 'stop',
      prompt_eval_count: reply.prompt_eval_count ?? 0,
      eval_count: reply.eval_count ?? 0,
      total_duration_ms: nsToMs(reply.total_duration),
    }
  }

  /** `chat` streamed (see `callAgentStream`). */
  async chatStream(input: { model?: string | undefined; messages: { role: 'system' | 'user' | 'assistant'; content: string }[]; options?: ModelOptions | undefined }, call: MarketplaceCall): Promise<ChunkStream<LlmChatChunk>> {
    const upstream = await call.server.chatStream({ model: input.model ?? this.p.chatModel, messages: input.messages, options: input.options })
    return mapBatches(upstream, chatChunk)
  }

  /** `completion` streamed (see `callAgentStream`). */
  async completionStream(input: { model?: string | undefined; prompt: string; system?: string | undefined; options?: ModelOptions | undefined }, call: MarketplaceCall): Promise<ChunkStream<LlmCompletionChunk>> {
    const upstream = await call.server.generateStream({ model: input.model ?? this.p.chatModel, prompt: input.prompt, system: input.system, options: input.options })
    return mapBatches(upstream, completionChunk)
  }
}

/** An Ollama generate chunk as a gateway completion chunk (usage and ms durations on the final one). */
function completionChunk(c: GenerateChunk): LlmCompletionChunk {
  const base = { model: c.model, created_at: c.created_at, response: c.response, done: c.done }
  return c.done ? { ...base, ...usageOf(c) } : base
}

function chatChunk(c: ChatChunk): LlmChatChunk {
  const base = { model: c.model, created_at: c.created_at, message: { role: 'assistant' as const, content: c.message.content ?? '' }, done: c.done }
  return c.done ? { ...base, ...usageOf(c) } : base
}

/** FOR / AGAINST / ABSTAIN from free text (the first one named wins; none named is an abstention). */
export function parseVote(text: string): 'for' | 'against' | 'abstain' {
  const match = /\b(for|yes|against|no|abstain)\b/i.exec(text)
  if (!match) return 'abstain'
  const word = match[1]!.toLowerCase()
  if (word === 'for' || word === 'yes') return 'for'
  if (word === 'against' || word === 'no') return 'against'
  return 'abstain'
}

/** An agent as the API shows it, at a given current revision. */
function viewOf(agent: AgentDefinition, current: { revision: number; model: string }) {
  return {
    id: agent.id,
    name: agent.name,
    role: agent.role,
    model: current.model,
    capabilities: [...agent.capabilities],
    status: 'available' as const,
    revision: current.revision,
  }
}
