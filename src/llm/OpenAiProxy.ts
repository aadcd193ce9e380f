import type { Marketplace } from '../marketplace/Marketplace.js'
import { type MeteredModelServer, type ModelServerAnswer, ModelServers, ModelServerUnavailableError, type OpenAiPath } from '../cost/meter/index.js'
import { type AnthropicErrorBody, anthropicErrorBody, openAiErrorBody, type OpenAiErrorBody } from '../shared/errorShapes/apiErrorBodies.js'

export type { OpenAiPath }

/** What `/llm/v1` answers: a JSON body (validated against the document), or a stream passed on as it comes. */
export type OpenAiProxyResult =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'stream'; status: number; contentType: string; bytes: AsyncGenerator<Uint8Array> }
  /** No answer to pass on: the coded error to throw (its status the catalogue's, its body the route's shape: the error stage's). */
  | { kind: 'refused'; error: ModelServerUnavailableError }

/** The model server's refusal in the shape a path's clients read when its own body is not OpenAI's: Anthropic's on `/v1/messages`. */
function refusalFor(path: OpenAiPath | undefined, status: number, message: string, code: string | null): OpenAiErrorBody | AnthropicErrorBody {
  return path === '/v1/messages' ? anthropicErrorBody(status, message) : openAiErrorBody(message, 'invalid_request_error', code)
}

function isOpenAiError(value: unknown): value is OpenAiErrorBody {
  const e = (value as { error?: { message?: unknown } } | null)?.error
  return typeof e === 'object' && e !== null && typeof e.message === 'string'
}

/**
 * `/llm/v1/*`: the model server's OpenAI-compatible API behind the gateway. Model names resolve through the
 * agent configuration first — a marketplace agent id (`ceo`, `analyst`, …) is its current model, and on chat its
 * instructions are the first system message — then go to the model server as they are; a model it does not
 * have is its 404, passed on in OpenAI's error shape. Streams (SSE) are passed on byte for byte as they arrive
 * (the usage event the meter asked for and the client did not is taken out); the model-server timeout bounds
 * each wait. Every call goes through the call's metered model server (its cap, its count, its end).
 */
export class OpenAiProxy {
  constructor(private readonly p: { models: ModelServers; marketplace: Marketplace; now: () => number }) {}

  private async resolve(body: Record<string, unknown>, path: OpenAiPath): Promise<Record<string, unknown>> {
    const model = body.model
    if (typeof model !== 'string' || !this.p.marketplace.isAgent(model)) return body
    const agent = await this.p.marketplace.agentContext(model)
    // The agent's instructions: the system prompt of each surface unless the request brings its own.
    if (path === '/v1/responses') return { ...body, model: agent.model, instructions: body.instructions ?? agent.instructions }
    if (path === '/v1/messages') return { ...body, model: agent.model, system: body.system ?? agent.instructions }
    if (path !== '/v1/chat/completions') return { ...body, model: agent.model }
    const messages = Array.isArray(body.messages) ? body.messages : []
    return { ...body, model: agent.model, messages: [{ role: 'system', content: agent.instructions }, ...messages] }
  }

  async forward(path: OpenAiPath, body: Record<string, unknown>, server: MeteredModelServer): Promise<OpenAiProxyResult> {
    const what = `POST ${path}`
    let upstream: ModelServerAnswer
    try {
      upstream = await server.openAi(path, await this.resolve(body, path))
    } catch (error) {
      return unavailable(error)
    }
    return this.answer(what, upstream, path)
  }

  /**
   * The model servers' models (with several, the union by id of those that answer) plus the marketplace agents
   * (usable as model names).
   */
  async models(signal?: AbortSignal): Promise<OpenAiProxyResult> {
    let upstreams: ModelServerAnswer[]
    try {
      upstreams = await this.p.models.openAiModels(signal)
    } catch (error) {
      return unavailable(error)
    }
    const results = await Promise.all(upstreams.map((upstream) => this.answer('GET /v1/models', upstream)))
    const lists = results.filter((r) => r.kind === 'json' && r.status === 200)
    if (lists.length === 0) return results[0]!
    const byId = new Map<string, { id: string }>()
    for (const r of lists) for (const model of (r.kind === 'json' ? (r.body as { data: { id: string }[] }).data : [])) if (!byId.has(model.id)) byId.set(model.id, model)
    const created = this.p.now()
    const agents = (await this.p.marketplace.listAgents()).map((a) => ({ id: a.id, object: 'model' as const, created, owned_by: 'pay2store-agent' }))
    return { kind: 'json', status: 200, body: { object: 'list', data: [...byId.values(), ...agents] } }
  }

  private async answer(what: string, upstream: ModelServerAnswer, path?: OpenAiPath): Promise<OpenAiProxyResult> {
    const { status, contentType } = upstream
    if (status === 200 && contentType.startsWith('text/event-stream')) return { kind: 'stream', status, contentType, bytes: upstream.bytes }
    let text: string
    try {
      text = await ModelServers.text(upstream)
    } catch (error) {
      return unavailable(error)
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    if (status === 200 && json !== undefined) return { kind: 'json', status, body: json }
    // The model server's own refusal (unknown model 404, bad request 400/422) is the caller's: passed on.
    if (status === 404 || status === 400 || status === 422) {
      // Anthropic's error body has the same `error.message`: passed on as it is.
      const body = isOpenAiError(json) ? json : refusalFor(path, status, `model server refused the request (${status})`, status === 404 ? 'model_not_found' : null)
      return { kind: 'json', status: status === 422 ? 400 : status, body }
    }
    const detail = isOpenAiError(json) ? `: ${json.error.message}` : ''
    return unavailable(new ModelServerUnavailableError('modelserver_unavailable', `model server at ${upstream.baseUrl} answered ${status} to ${what}${detail}`))
  }
}

/** The model server could not answer: its coded error, which the error stage renders in the route's shape. */
function unavailable(error: unknown): OpenAiProxyResult {
  if (!(error instanceof ModelServerUnavailableError)) throw error
  return { kind: 'refused', error }
}
