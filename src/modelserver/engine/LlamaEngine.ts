import {
  getLlama,
  GeneralChatWrapper,
  HarmonyChatWrapper,
  JinjaTemplateChatWrapper,
  LlamaChat,
  LlamaJsonSchemaValidationError,
  resolveChatWrapper,
  LlamaGrammarEvaluationState,
  LlamaLogLevel,
  TokenBias,
  type ChatWrapper,
  type ChatModelFunctions,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaEmbeddingContext,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp'
import type {
  ChatMessage,
  ChatParams,
  CommonGenerateParams,
  CompleteParams,
  EmbedParams,
  EmbedResult,
  Engine,
  EngineFormat,
  EngineModel,
  EngineOptions,
  GenerationResult,
  LoadModelParams,
  ModelInfo,
  ModelKind,
  ThinkOption,
  TokenChunk,
  TokenLogprob,
  ToolCall,
  ToolDefinition,
} from './Engine.js'
import type { CreateEngineParams } from './createEngine.js'
import { toChatHistory } from './chatHistory.js'
import { EngineCapabilityError, EngineError, EngineInputTooLongError, EngineModelUnloadedError } from './errors.js'
import { boundedJsonGrammar } from './boundedJsonGrammar.js'
import { formatTooBig, MAX_CACHED_GRAMMARS } from './formatLimits.js'
import { SchemaRefusal, toGrammarSchema, toToolParametersSchema } from './jsonSchema.js'
import { detectKind, readModelInfo } from './modelInfo.js'
import { defaultThreadCount } from './threads.js'
import { normalize } from './vectors.js'

const DEFAULT_NUM_CTX = 2048
/** Thread count: explicit, else `MODELSERVER_THREADS`, else `defaultThreadCount()` (never llama.cpp's default). */
export function resolveThreads(explicit?: number): number {
  if (explicit !== undefined && explicit > 0) return Math.floor(explicit)
  const env = Number(process.env.MODELSERVER_THREADS)
  if (Number.isFinite(env) && env > 0) return Math.floor(env)
  return defaultThreadCount()
}

export class LlamaEngine implements Engine {
  private readonly models = new Set<LlamaEngineModel>()

  private constructor(
    readonly llama: Llama,
    readonly threads: number,
    readonly warnings: readonly string[],
  ) {}

  static async create(params: CreateEngineParams = {}): Promise<LlamaEngine> {
    const threads = resolveThreads(params.threads)
    const warnings: string[] = []
    const llama = await getLlama({
      gpu: false,
      build: 'never',
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => {
        const text = message.trim()
        if (!text) return
        if (level === LlamaLogLevel.warn || level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) {
          warnings.push(`${level}: ${text}`)
        }
      },
    })
    return new LlamaEngine(llama, threads, warnings)
  }

  inspect(path: string): Promise<ModelInfo> {
    return readModelInfo(path, this.llama)
  }

  async loadModel(params: LoadModelParams): Promise<EngineModel> {
    const started = process.hrtime.bigint()
    let info: ModelInfo
    try {
      info = await readModelInfo(params.path)
    } catch (cause) {
      throw new EngineError('model_load_failed', 'unable to load model', { details: String(cause), cause })
    }
    const kind: ModelKind = params.kind ?? detectKind(info.architecture, info.metadata)
    let model: LlamaModel
    try {
      model = await this.llama.loadModel({ modelPath: params.path, gpuLayers: 0, loadSignal: params.signal })
    } catch (cause) {
      throw new EngineError('model_load_failed', 'unable to load model', { details: String(cause), cause })
    }
    const m = new LlamaEngineModel(this, model, params.path, params.name ?? info.metadata['general.name']?.toString() ?? params.path, kind, info)
    try {
      await m.initContext(params.numCtx)
      m.warmUp()
    } catch (cause) {
      await model.dispose()
      throw new EngineError('model_load_failed', 'unable to create a context for the model', { details: String(cause), cause })
    }
    m.loadDurationNs = Number(process.hrtime.bigint() - started)
    this.models.add(m)
    return m
  }

  /** Templates whose automatic resolution ended in node-llama-cpp's generic Jinja wrapper. */
  private readonly jinjaTemplates = new Set<string>()

  /**
   * The chat wrapper for a model: node-llama-cpp's automatic choice (a specialised wrapper when the Jinja
   * template matches a known format, else the Jinja template itself). The automatic comparison costs ~1.5 s,
   * so a template that resolved to the generic Jinja wrapper once is built directly on later loads.
   * @internal
   */
  resolveWrapper(model: LlamaModel, template: string, level?: ThinkLevel): ChatWrapper {
    const common = {
      bosString: model.tokens.bosString,
      filename: model.filename,
      fileInfo: model.fileInfo,
      tokenizer: model.tokenizer,
      llama: this.llama,
    }
    // Think levels reach the model the way its template takes them: gpt-oss's Harmony format through the wrapper's
    // reasoning effort, a Jinja template that reads `reasoning_effort` through that variable.
    if (level) {
      const plain = this.resolveWrapper(model, template)
      if (plain instanceof HarmonyChatWrapper) return new HarmonyChatWrapper({ reasoningEffort: level })
      if (templateTakesLevels(template)) {
        const w = resolveChatWrapper({ ...common, type: 'jinjaTemplate', customWrapperSettings: { jinjaTemplate: { template, additionalRenderParameters: { reasoning_effort: level } } } })
        if (w) return w
      }
      return plain
    }
    if (template && this.jinjaTemplates.has(template)) {
      const w = resolveChatWrapper({ ...common, type: 'jinjaTemplate' })
      if (w) return w
    }
    const w = resolveChatWrapper(common) ?? new GeneralChatWrapper()
    if (template && w instanceof JinjaTemplateChatWrapper) this.jinjaTemplates.add(template)
    return w
  }

  /** @internal */
  forget(m: LlamaEngineModel): void {
    this.models.delete(m)
  }

  async dispose(): Promise<void> {
    for (const m of [...this.models]) await m.unload()
    await this.llama.dispose()
  }
}

type Sampling = {
  temperature: number
  topK: number
  topP: number
  minP: number
  seed: number | undefined
}

/** The sampler's settings as node-llama-cpp's evaluation takes them. */
function samplingOf({ temperature, topK, topP, minP, seed }: Sampling): Sampling {
  return { temperature, topK, topP, minP, seed }
}

/**
 * What a generation sends through `onToken` and when: `onStart` once (before the first piece at the latest), then
 * the decoded text's new characters with the logprobs gathered since the last piece.
 */
function tokenEmitter(run: GenerateRun) {
  let startPending = run.onStart
  let emitted = 0 // characters of the decoded text already sent through onToken
  let pending: TokenLogprob[] = []
  const tellStart = () => {
    const told = startPending
    startPending = undefined
    told?.()
  }
  return {
    startPending: () => startPending !== undefined,
    tellStart,
    logprob: (entry: TokenLogprob) => void pending.push(entry),
    /** Sends `text` up to `upTo` (what cannot turn into a stop sequence any more). */
    flush(text: string, upTo: number): void {
      if (upTo <= emitted && pending.length === 0) return
      tellStart()
      const piece = text.slice(emitted, Math.max(emitted, upTo))
      emitted = Math.max(emitted, upTo)
      if (run.onToken && (piece !== '' || pending.length > 0)) {
        const chunk: TokenChunk = { content: piece }
        if (run.logprobs) chunk.logprobs = pending
        run.onToken(chunk)
      }
      pending = []
    },
  }
}

type GenerateRun = {
  tokens: Token[]
  sampling: Sampling
  penalties: Penalties | undefined
  grammar?: LlamaGrammar | undefined
  stop: string[]
  maxTokens: number | undefined
  logprobs: boolean
  topLogprobs: number
  signal?: AbortSignal | undefined
  onToken?: ((chunk: TokenChunk) => void) | undefined
  onStart?: (() => void) | undefined
  trimEnd: boolean
  truncate: boolean
  shift: boolean
}

/** The token loop's settings for a completion or a chat request (same options, same meaning). */
function generateRun(params: CommonGenerateParams, tokens: Token[], grammar: LlamaGrammar | undefined): GenerateRun {
  return {
    tokens,
    sampling: sampling(params.options),
    penalties: penalties(params.options),
    grammar,
    stop: stopList(params.options?.stop),
    maxTokens: numPredict(params.options),
    logprobs: params.logprobs === true,
    topLogprobs: params.topLogprobs ?? 0,
    signal: params.signal,
    onToken: params.onToken,
    onStart: params.onStart,
    trimEnd: grammar !== undefined,
    truncate: params.truncate !== false,
    shift: params.shift === true,
  }
}

/** A FIFO of jobs: one generation or embedding at a time per model. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()
  pending = 0

  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.pending++
    const result = this.tail.then(async () => {
      if (signal?.aborted) throw signal.reason ?? new DOMException('aborted', 'AbortError')
      return job()
    })
    this.tail = result.then(
      () => undefined,
      () => undefined,
    )
    return result.finally(() => {
      this.pending--
    })
  }
}

export class LlamaEngineModel implements EngineModel {
  loadDurationNs = 0
  private context: LlamaContext | undefined
  private sequence: LlamaContextSequence | undefined
  private embedContext: LlamaEmbeddingContext | undefined
  private ctxSize = 0
  private contextBytes = 0
  private unloaded = false
  private readonly queue = new SerialQueue()
  /** Compiled `format` grammars by schema text, least recently used first (at most `MAX_CACHED_GRAMMARS`). */
  private readonly grammarCache = new Map<string, Promise<LlamaGrammar>>()
  /** The tiny models' nudges, read from GGUF metadata (absent in real models). */
  private readonly nudge: { toolCallToken?: string; toolCallBias?: number; maxStringLength?: number }

  constructor(
    private readonly engine: LlamaEngine,
    private readonly model: LlamaModel,
    readonly path: string,
    readonly name: string,
    readonly kind: ModelKind,
    readonly info: ModelInfo,
  ) {
    const md = info.metadata
    this.nudge = {
      toolCallToken: typeof md['svc.nudge.tool_call_token'] === 'string' ? (md['svc.nudge.tool_call_token'] as string) : undefined,
      toolCallBias: typeof md['svc.nudge.tool_call_logit_bias'] === 'number' ? (md['svc.nudge.tool_call_logit_bias'] as number) : undefined,
      maxStringLength:
        typeof md['svc.nudge.json_string_max_length'] === 'number' ? (md['svc.nudge.json_string_max_length'] as number) : undefined,
    }
    // The kind decides completion vs embedding; after load, node-llama-cpp's own FIM detection decides insert.
    const rest = info.capabilities.filter((c) => c !== 'completion' && c !== 'embedding' && c !== 'insert')
    const capabilities: ModelInfo['capabilities'] = kind === 'completion' ? ['completion', ...rest] : ['embedding']
    const infill = model.tokens.infill
    if (kind === 'completion' && infill.prefix != null && infill.suffix != null && infill.middle != null) capabilities.push('insert')
    this.info = { ...info, capabilities }
  }

  get contextLength(): number {
    return this.ctxSize
  }

  get sizeBytes(): number {
    return this.model.size + this.contextBytes
  }

  get pending(): number {
    return this.queue.pending
  }

  private hasCap(c: ModelInfo['capabilities'][number]): boolean {
    return this.info.capabilities.includes(c)
  }

  /** Context size used when a request gives no num_ctx: the one asked for at load. */
  private defaultCtx = DEFAULT_NUM_CTX

  /** Sets the size used when a request gives no num_ctx, then creates the context. */
  async initContext(numCtx: number | undefined): Promise<void> {
    if (numCtx && numCtx > 0) this.defaultCtx = Math.floor(numCtx)
    await this.ensureContext(undefined)
  }

  /** (Re)creates the context when the requested size differs. Runs inside the queue (or at load). */
  async ensureContext(numCtx: number | undefined): Promise<void> {
    if (this.unloaded) throw new EngineModelUnloadedError()
    const trained = this.model.trainContextSize
    const wanted = Math.max(16, Math.min(numCtx && numCtx > 0 ? Math.floor(numCtx) : this.defaultCtx, trained))
    if (wanted === this.ctxSize && (this.context || this.embedContext)) return
    await this.disposeContexts()
    const threads = this.engine.threads
    if (this.kind === 'embedding') {
      this.embedContext = await this.model.createEmbeddingContext({ contextSize: wanted, threads })
    } else {
      this.context = await this.model.createContext({ contextSize: wanted, threads, sequences: 1 })
      this.sequence = this.context.getSequence()
    }
    this.ctxSize = wanted
    this.contextBytes = this.contextEstimate(wanted, this.kind === 'embedding')
  }

  /** The embedding context, beside the chat context of a completion model (same size, its memory counted). */
  private async ensureEmbeddingContext(numCtx: number | undefined): Promise<LlamaEmbeddingContext> {
    await this.ensureContext(numCtx)
    if (!this.embedContext) {
      this.embedContext = await this.model.createEmbeddingContext({ contextSize: this.ctxSize, threads: this.engine.threads })
      this.contextBytes += this.contextEstimate(this.ctxSize, true)
    }
    return this.embedContext
  }

  private contextEstimate(contextSize: number, isEmbeddingContext: boolean): number {
    try {
      return this.model.fileInsights.estimateContextResourceRequirements({ contextSize, modelGpuLayers: 0, sequences: 1, isEmbeddingContext }).cpuRam
    } catch {
      return 0
    }
  }

  private async disposeContexts(): Promise<void> {
    const ctx = this.context
    const emb = this.embedContext
    this.context = undefined
    this.sequence = undefined
    this.embedContext = undefined
    if (ctx) await ctx.dispose()
    if (emb) await emb.dispose()
  }

  async unload(): Promise<void> {
    if (this.unloaded) return
    this.unloaded = true
    await this.queue.run(async () => {
      await this.disposeContexts()
      await this.model.dispose()
    })
    this.engine.forget(this)
  }

  // ---------------------------------------------------------------- generation

  async complete(params: CompleteParams): Promise<GenerationResult> {
    this.assertUsable('completion')
    if (params.think && !this.hasCap('thinking')) throw new EngineCapabilityError('thinking', this.name)
    const suffix = params.suffix ?? ''
    if (suffix !== '' && !this.hasCap('insert')) throw new EngineCapabilityError('insert', this.name)
    if (!params.raw && suffix === '') {
      const messages: ChatMessage[] = []
      if (params.system) messages.push({ role: 'system', content: params.system })
      messages.push({ role: 'user', content: params.prompt })
      return this.chat({ ...params, messages })
    }
    const queuedAt = process.hrtime.bigint()
    return this.queue.run(async () => {
      const grammar = await this.resolveGrammar(params.format)
      await this.ensureContext(params.options?.num_ctx)
      let tokens: Token[]
      if (suffix !== '') {
        const { prefix, suffix: suf, middle } = this.model.tokens.infill
        if (prefix == null || suf == null || middle == null) throw new EngineCapabilityError('insert', this.name)
        tokens = [...this.bos(), prefix, ...this.model.tokenize(params.prompt, false), suf, ...this.model.tokenize(suffix, false), middle]
      } else {
        tokens = [...this.bos(), ...this.model.tokenize(params.prompt, true)]
      }
      return this.generate(generateRun(params, tokens, grammar), queuedAt)
    }, params.signal)
  }

  async chat(params: ChatParams): Promise<GenerationResult> {
    this.assertUsable('completion')
    const thinking = this.hasCap('thinking')
    if (params.think && !thinking) throw new EngineCapabilityError('thinking', this.name)
    if (params.messages.some((m) => m.images && m.images.length > 0)) throw new EngineCapabilityError('vision', this.name)
    const tools = params.tools ?? []
    if (tools.length > 0 && !this.hasCap('tools')) throw new EngineCapabilityError('tools', this.name)
    const queuedAt = process.hrtime.bigint()
    return this.queue.run(async () => {
      const grammar = await this.resolveGrammar(params.format)
      // Tools go through LlamaChat (function-call detection and argument grammar), as does a thinking model
      // (thought segments). Both only when no `format` is given: a grammar and functions cannot be combined.
      const useLlamaChat = grammar === undefined && (tools.length > 0 || thinking)
      await this.ensureContext(params.options?.num_ctx)
      const history = toChatHistory(params.messages, { withThinking: thinking })
      const chatWrapper = this.chatWrapper(thinkLevelOf(params.think))
      if (tools.length > 0 && params.toolChoice === 'required') return this.generateRequiredCall(params, history, tools, queuedAt)
      if (useLlamaChat) return this.generateWithLlamaChat(params, history, tools, queuedAt)
      const state = chatWrapper.generateContextState({ chatHistory: history })
      const tokens = state.contextText.tokenize(this.model.tokenizer)
      return this.generate(generateRun(params, tokens, grammar), queuedAt, state.stopGenerationTriggers)
    }, params.signal)
  }

  private assertUsable(cap: 'completion'): void {
    if (this.unloaded) throw new EngineModelUnloadedError()
    if (this.kind !== cap) throw new EngineCapabilityError(cap, this.name)
  }

  private bos(): Token[] {
    const bos = this.model.tokens.bos
    return bos != null && this.model.tokens.shouldPrependBosToken ? [bos] : []
  }

  /** Resolves the chat wrapper now (node-llama-cpp compares the Jinja template with its known formats, ~1–2 s). */
  warmUp(): void {
    if (this.kind === 'completion') this.chatWrapper()
  }

  /** The chat wrapper, per think level (undefined: the model's default). */
  private readonly wrappers = new Map<ThinkLevel | undefined, ChatWrapper>()
  private chatWrapper(level?: ThinkLevel): ChatWrapper {
    let w = this.wrappers.get(level)
    if (!w) {
      w = this.engine.resolveWrapper(this.model, this.info.template, level)
      this.wrappers.set(level, w)
    }
    return w
  }

  private async resolveGrammar(format: EngineFormat | undefined): Promise<LlamaGrammar | undefined> {
    if (format === undefined || format === null || (format as unknown) === '') return undefined
    const llama = this.engine.llama
    if (format === 'json') {
      const key = 'json'
      if (!this.grammarCache.has(key)) {
        const bound = this.nudge.maxStringLength
        this.grammarCache.set(key, bound !== undefined ? llama.createGrammar({ grammar: boundedJsonGrammar(bound) }) : llama.getGrammarFor('json'))
      }
      return this.grammarCache.get(key)!
    }
    if (typeof format !== 'object') {
      throw new EngineError('invalid_format', `invalid format: ${JSON.stringify(format)}; expected "json" or a JSON schema`)
    }
    const key = JSON.stringify(format)
    const tooBig = formatTooBig(key, format)
    if (tooBig) throw new EngineError('invalid_format', tooBig)
    let g = this.grammarCache.get(key)
    if (g) {
      // most recently used last: the oldest is the one dropped
      this.grammarCache.delete(key)
      this.grammarCache.set(key, g)
    } else {
      let schema
      try {
        schema = toGrammarSchema(format, this.nudge.maxStringLength)
      } catch (error) {
        if (error instanceof SchemaRefusal) throw new EngineError('invalid_format', `invalid JSON schema in format: ${error.message}`, { cause: error })
        throw error
      }
      g = llama.createGrammarForJsonSchema(schema as never) as Promise<LlamaGrammar>
      this.grammarCache.set(key, g)
      if (this.grammarCache.size > MAX_CACHED_GRAMMARS) this.grammarCache.delete(this.grammarCache.keys().next().value!)
    }
    try {
      return await g
    } catch (cause) {
      this.grammarCache.delete(key)
      throw new EngineError('invalid_format', 'invalid JSON schema in format', { details: String(cause), cause })
    }
  }

  /**
   * The prompt as it fits the context — too long, the start token and the most recent tokens (as Ollama truncates),
   * or an error without `truncate` — and how many tokens may follow it.
   */
  private fitPrompt(run: GenerateRun): { tokens: Token[]; limit: number } {
    let tokens = run.tokens
    const maxPrompt = Math.max(1, this.ctxSize - 1)
    if (tokens.length > maxPrompt) {
      if (!run.truncate) throw new EngineInputTooLongError(tokens.length, maxPrompt)
      const keepBos = this.bos().length > 0 ? 1 : 0
      tokens = [...tokens.slice(0, keepBos), ...tokens.slice(tokens.length - (maxPrompt - keepBos))]
    }
    const room = this.ctxSize - tokens.length
    // With `shift` the sequence's context shift (node-llama-cpp erases the oldest tokens) makes room as it fills.
    const budget = run.shift ? Math.max(room, SHIFT_CONTEXTS * this.ctxSize) : room
    const limit = run.maxTokens === undefined ? budget : Math.min(run.maxTokens, run.shift ? run.maxTokens : room)
    return { tokens, limit }
  }

  /**
   * Our own token loop on top of `evaluateWithMetadata`, used for completion, chat without tools, format
   * grammars and fill-in-the-middle. The sequence is cleared first, so a request never depends on the
   * previous one (same seed + options + prompt → same tokens).
   */
  private async generate(run: GenerateRun, queuedAt: bigint, stopTriggers: readonly unknown[] = []): Promise<GenerationResult> {
    const seq = this.sequence!
    const model = this.model
    await seq.clearHistory()

    const { tokens, limit } = this.fitPrompt(run)
    const stops = [...run.stop]
    const stopTokens = new Set<Token>()
    for (const trigger of stopTriggers) addStopTrigger(trigger, model, stops, stopTokens)
    if (run.grammar) for (const trigger of run.grammar.stopGenerationTriggers) addStopTrigger(trigger, model, stops, stopTokens)
    const grammarState = run.grammar ? new LlamaGrammarEvaluationState({ model, grammar: run.grammar }) : undefined
    const maxStopLength = stops.reduce((n, s) => Math.max(n, s.length), 0)
    let undecoded: Token[] = []

    const start = process.hrtime.bigint()
    let firstTokenAt: bigint | undefined
    const generated: Token[] = []
    let text = ''
    const emit = tokenEmitter(run)
    const allLogprobs: TokenLogprob[] = []
    let doneReason: 'stop' | 'length' = 'stop'
    let aborted = false
    let stoppedAt: number | undefined

    if (limit <= 0) doneReason = 'length' // num_predict 0, or no room left in the context
    if (limit > 0 && !run.signal?.aborted) {
      // Told one turn later, once node-llama-cpp has handed the prompt's batch to its thread (a lone sequence's
      // batch goes in the same turn): what the listener then does (a stream's headers) runs beside the
      // evaluation instead of holding its start back. Never after the first token (`flush` tells it first).
      if (emit.startPending()) setImmediate(emit.tellStart)
      const iterator = seq.evaluateWithMetadata(tokens, { confidence: run.logprobs, probabilities: run.logprobs && run.topLogprobs > 0 }, {
        ...samplingOf(run.sampling),
        grammarEvaluationState: grammarState,
        yieldEogToken: true,
        repeatPenalty: run.penalties ? repeatPenaltyOf(run.penalties, tokens, generated, this.ctxSize) : undefined,
      })
      for await (const out of iterator) {
        firstTokenAt ??= process.hrtime.bigint()
        const token = out.token
        if (model.isEogToken(token) || stopTokens.has(token)) {
          doneReason = 'stop'
          break
        }
        generated.push(token)
        if (run.logprobs) {
          const entry = tokenLogprob(model, token, out as { confidence?: number; probabilities?: Map<Token, number> }, run.topLogprobs)
          emit.logprob(entry)
          allLogprobs.push(entry)
        }
        // Incremental decoding: tokens that end inside a UTF-8 sequence wait for the rest (up to 4 bytes).
        undecoded.push(token)
        const piece = model.detokenize(undecoded, false, generated.slice(Math.max(0, generated.length - undecoded.length - 8), generated.length - undecoded.length))
        if (!piece.endsWith('\uFFFD') || undecoded.length >= 4) {
          undecoded = []
          const before = text.length
          text += piece
          // Only the tail can hold a new stop match.
          const stopIndex = findStop(text, stops, Math.max(0, before - maxStopLength))
          if (stopIndex !== undefined) {
            stoppedAt = stopIndex
            doneReason = 'stop'
            break
          }
          // Hold back any tail that may still become a stop sequence (and trailing whitespace a grammar trims).
          let safe = text.length - partialStopLength(text, stops)
          if (run.trimEnd) safe = Math.min(safe, text.trimEnd().length)
          emit.flush(text, safe)
        }
        if (run.signal?.aborted) {
          aborted = true
          break
        }
        if (generated.length >= limit) {
          doneReason = 'length'
          break
        }
      }
    }
    if (run.signal?.aborted) aborted = true
    if (undecoded.length > 0 && stoppedAt === undefined) text += model.detokenize(undecoded, false)
    const end = process.hrtime.bigint()
    let content = stoppedAt !== undefined ? text.slice(0, stoppedAt) : text
    if (run.trimEnd) content = content.trimEnd()
    if (!aborted) emit.flush(content, content.length)
    return {
      content,
      doneReason,
      aborted: aborted || undefined,
      promptEvalCount: tokens.length,
      evalCount: generated.length,
      promptEvalDurationNs: Number((firstTokenAt ?? end) - start),
      evalDurationNs: Number(end - (firstTokenAt ?? end)),
      totalDurationNs: Number(end - queuedAt),
      logprobs: run.logprobs ? allLogprobs : undefined,
    }
  }

  /**
   * `tool_choice` required (or a named function): the prompt documents the tools as the chat wrapper does, and a
   * grammar allows nothing but `{"name": <one of the tools>, "arguments": <its parameters>}` — so the model calls
   * a tool whatever it would have preferred (a random tiny model too). The call is streamed whole once parsed.
   */
  private async generateRequiredCall(
    params: ChatParams,
    history: ReturnType<typeof toChatHistory>,
    tools: ToolDefinition[],
    queuedAt: bigint,
  ): Promise<GenerationResult> {
    const state = this.chatWrapper(thinkLevelOf(params.think)).generateContextState({
      chatHistory: history,
      availableFunctions: this.functionsOf(tools),
      documentFunctionParams: true,
    })
    const tokens = state.contextText.tokenize(this.model.tokenizer)
    const grammar = await this.resolveGrammar(requiredCallSchema(tools))
    const result = await this.generate(generateRun({ ...params, onToken: undefined }, tokens, grammar), queuedAt, state.stopGenerationTriggers)
    const call = parseRequiredCall(result.content, tools)
    if (call && !result.aborted) params.onToken?.({ toolCalls: [call] })
    return { ...result, content: call ? '' : result.content, toolCalls: call ? [call] : undefined, doneReason: call ? 'stop' : result.doneReason, logprobs: params.logprobs ? [] : undefined }
  }

  /** The tools as node-llama-cpp's functions; a tool whose parameters no grammar can honour is a 400 naming it. */
  private functionsOf(tools: ToolDefinition[]): Record<string, ChatModelFunctions[string]> {
    const functions: Record<string, ChatModelFunctions[string]> = Object.create(null) as Record<string, ChatModelFunctions[string]>
    for (const t of tools) {
      let params
      try {
        params = t.function.parameters ? toToolParametersSchema(t.function.parameters, this.nudge.maxStringLength) : undefined
      } catch (error) {
        if (error instanceof SchemaRefusal) throw new EngineError('invalid_tools', `tool ${JSON.stringify(t.function.name)}: parameters ${error.message}`, { cause: error })
        throw error
      }
      functions[t.function.name] = { description: t.function.description, params }
    }
    return functions
  }

  /** Tool calls and thinking go through node-llama-cpp's LlamaChat. No logprobs on this path. */
  private async generateWithLlamaChat(
    params: ChatParams,
    history: ReturnType<typeof toChatHistory>,
    tools: ToolDefinition[],
    queuedAt: bigint,
  ): Promise<GenerationResult> {
    const seq = this.sequence!
    await seq.clearHistory()
    const chat = new LlamaChat({ contextSequence: seq, autoDisposeSequence: false, chatWrapper: this.chatWrapper(thinkLevelOf(params.think)) })
    try {
      const functions = this.functionsOf(tools)
      const lastIsToolResult = params.messages[params.messages.length - 1]?.role === 'tool'
      let tokenBias: TokenBias | undefined
      if (tools.length > 0 && !lastIsToolResult && this.nudge.toolCallToken && this.nudge.toolCallBias) {
        const ids = this.model.tokenize(this.nudge.toolCallToken, true)
        if (ids.length === 1) {
          tokenBias = new TokenBias(this.model.tokenizer)
          tokenBias.set(ids[0]!, { logit: this.nudge.toolCallBias })
        }
      }
      // A nudged model would call again and again; one call per turn is what the nudge is for.
      const maxParallelFunctionCalls = tokenBias ? 1 : undefined
      const s = sampling(params.options)
      const pen = penalties(params.options)
      const meterBefore = seq.tokenMeter.getState()
      const start = process.hrtime.bigint()
      let firstAt: bigint | undefined
      const think = params.think === undefined ? undefined : Boolean(params.think)
      let thinkingText = ''
      const maxTokens = numPredict(params.options)
      const paramsText = new Map<number, string>()
      const calls: Array<{ name: string; text: string }> = []
      let contentText = ''
      const res = await callsOnInvalidArguments(chat.generateResponse(history, {
        functions: tools.length > 0 ? functions : undefined,
        maxParallelFunctionCalls,
        tokenBias,
        temperature: s.temperature,
        topK: s.topK,
        topP: s.topP,
        minP: s.minP,
        seed: s.seed,
        maxTokens,
        signal: params.signal,
        stopOnAbortSignal: true,
        customStopTriggers: stopList(params.options?.stop),
        budgets: think === false ? { thoughtTokens: 0 } : undefined,
        // Off unless asked for, as on the other path (LlamaChat's own default is 1.1 over the last 64 tokens).
        repeatPenalty: pen
          ? { lastTokens: pen.lastN < 0 ? this.ctxSize : pen.lastN, penalty: pen.penalty, frequencyPenalty: pen.frequency, presencePenalty: pen.presence, penalizeNewLine: true }
          : false,
        onToken: () => {
          firstAt ??= process.hrtime.bigint()
        },
        // A call is streamed whole as soon as its parameters are complete (Ollama sends a call in that chunk).
        onFunctionCallParamsChunk: (chunk) => {
          const text = (paramsText.get(chunk.callIndex) ?? '') + chunk.paramsChunk
          paramsText.set(chunk.callIndex, text)
          if (!chunk.done) return
          calls.push({ name: chunk.functionName, text })
          params.onToken?.({ toolCalls: [{ type: 'function', function: { index: chunk.callIndex, name: chunk.functionName, arguments: parseArguments(text) } }] })
        },
        onResponseChunk: (chunk) => {
          firstAt ??= process.hrtime.bigint()
          if (chunk.type === 'segment' && chunk.segmentType === 'thought') {
            if (chunk.text) {
              thinkingText += chunk.text
              if (think !== false) params.onToken?.({ thinking: chunk.text })
            }
          } else if (chunk.type === undefined && chunk.text) {
            contentText += chunk.text
            params.onToken?.({ content: chunk.text })
          }
        },
      }))
      const end = process.hrtime.bigint()
      const meter = seq.tokenMeter.diff(meterBefore)
      const toolCalls = toolCallsOf(res, calls)
      const aborted = params.signal?.aborted === true
      const stopReason = res?.metadata.stopReason
      return {
        content: res?.response ?? contentText,
        thinking: think === false || !thinkingText ? undefined : thinkingText,
        toolCalls,
        doneReason: !toolCalls && stopReason === 'maxTokens' ? 'length' : 'stop',
        aborted: aborted || undefined,
        promptEvalCount: meter.usedInputTokens,
        evalCount: meter.usedOutputTokens,
        promptEvalDurationNs: Number((firstAt ?? end) - start),
        evalDurationNs: Number(end - (firstAt ?? end)),
        totalDurationNs: Number(end - queuedAt),
        logprobs: params.logprobs ? [] : undefined,
      }
    } finally {
      await chat.dispose({ disposeSequence: false })
    }
  }

  // ---------------------------------------------------------------- embeddings

  /**
   * Any model embeds, as in Ollama: an embedding model in its own context, a chat model in an embedding context made
   * beside its chat context on its first embedding (a model is loaded as what its file says it is, whichever request
   * loads it; loaded for embeddings, a chat model refused every generation until it was unloaded).
   */
  async embed(params: EmbedParams): Promise<EmbedResult> {
    if (this.unloaded) throw new EngineModelUnloadedError()
    if (params.dimensions !== undefined && (!Number.isInteger(params.dimensions) || params.dimensions < 1)) {
      throw new EngineError('invalid_options', 'dimensions must be a positive integer')
    }
    if (params.dimensions !== undefined && params.dimensions > this.info.embeddingLength) {
      throw new EngineError('invalid_options', `dimensions must be at most ${this.info.embeddingLength}`)
    }
    const queuedAt = process.hrtime.bigint()
    return this.queue.run(async () => {
      const ctx = await this.ensureEmbeddingContext(params.options?.num_ctx)
      const embeddings: number[][] = []
      let promptEvalCount = 0
      for (const input of params.inputs) {
        if (params.signal?.aborted) throw params.signal.reason ?? new DOMException('aborted', 'AbortError')
        let tokens = this.model.tokenize(input, false)
        const bos = this.bos()
        // node-llama-cpp evaluates an embedding input only when it is strictly shorter than its context (it
        // throws at `length >= contextSize`), so an input fills at most ctxSize - 1 tokens.
        const usable = this.ctxSize - 1
        const max = usable - bos.length
        if (tokens.length > max) {
          if (params.truncate === false) throw new EngineInputTooLongError(tokens.length + bos.length, usable)
          tokens = tokens.slice(0, max)
        }
        tokens = [...bos, ...tokens]
        if (tokens.length === 0 && this.model.tokens.eos != null) tokens = [this.model.tokens.eos]
        promptEvalCount += tokens.length
        const e = await ctx.getEmbeddingFor(tokens)
        let v = normalize(e.vector)
        if (params.dimensions !== undefined && params.dimensions < v.length) v = normalize(v.slice(0, params.dimensions))
        embeddings.push(v)
      }
      return { embeddings, promptEvalCount, totalDurationNs: Number(process.hrtime.bigint() - queuedAt) }
    }, params.signal)
  }
}

// ------------------------------------------------------------------ helpers

function sampling(o: EngineOptions | undefined): Sampling {
  const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d)
  const seed = typeof o?.seed === 'number' && Number.isFinite(o.seed) && o.seed >= 0 ? Math.floor(o.seed) >>> 0 : undefined
  return {
    temperature: Math.max(0, num(o?.temperature, 0.8)),
    topK: Math.max(0, Math.floor(num(o?.top_k, 40))),
    topP: Math.min(1, Math.max(0, num(o?.top_p, 0.9))),
    minP: Math.min(1, Math.max(0, num(o?.min_p, 0))),
    seed: seed ?? (Math.random() * 2 ** 32) >>> 0,
  }
}

/**
 * Ollama's repetition options: `repeat_penalty` (1 = off), `frequency_penalty` and `presence_penalty` (0 = off)
 * over the last `repeat_last_n` tokens (default 64; 0 = off; -1 = the whole context). Undefined when all are off.
 * The defaults leave them off (Ollama's `repeat_penalty` default is 1.1; openapi/modelserver.yaml says so).
 */
type Penalties = { lastN: number; penalty: number; frequency: number; presence: number }

function penalties(o: EngineOptions | undefined): Penalties | undefined {
  const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d)
  const p: Penalties = {
    lastN: Math.floor(num(o?.repeat_last_n, 64)),
    penalty: Math.max(0, num(o?.repeat_penalty, 1)),
    frequency: num(o?.frequency_penalty, 0),
    presence: num(o?.presence_penalty, 0),
  }
  if (p.lastN === 0 || (p.penalty === 1 && p.frequency === 0 && p.presence === 0)) return undefined
  return p
}

/** The penalty over the most recent tokens of the context (prompt, then what was generated so far). */
function repeatPenaltyOf(p: Penalties, prompt: Token[], generated: Token[], ctxSize: number) {
  const lastN = p.lastN < 0 ? ctxSize : p.lastN
  return {
    punishTokens: () => {
      if (generated.length >= lastN) return generated.slice(generated.length - lastN)
      return [...prompt.slice(Math.max(0, prompt.length - (lastN - generated.length))), ...generated]
    },
    maxPunishTokens: lastN,
    penalty: p.penalty,
    frequencyPenalty: p.frequency,
    presencePenalty: p.presence,
  }
}

type ThinkLevel = 'low' | 'medium' | 'high'

/** With `shift` and no `num_predict`, generation stops after this many contexts' worth of tokens (a runaway bound). */
const SHIFT_CONTEXTS = 4

/**
 * The JSON a required call is constrained to: with one tool, its parameters (the name is known — every token of
 * the budget goes to the arguments); with several, `{"name": <one of them>, "arguments": <its parameters>}`.
 */
function requiredCallSchema(tools: ToolDefinition[]): Record<string, unknown> {
  const paramsOf = (t: ToolDefinition) => t.function.parameters ?? { type: 'object', properties: {} }
  if (tools.length === 1) return paramsOf(tools[0]!)
  return {
    oneOf: tools.map((t) => ({
      type: 'object',
      properties: { name: { const: t.function.name }, arguments: paramsOf(t) },
      required: ['name', 'arguments'],
      additionalProperties: false,
    })),
  }
}

function parseRequiredCall(text: string, tools: ToolDefinition[]): ToolCall | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined // cut short by num_predict: no call
  }
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
  if (!isObject(value)) return undefined
  if (tools.length === 1) return { type: 'function', function: { index: 0, name: tools[0]!.function.name, arguments: value } }
  if (typeof value.name !== 'string') return undefined
  return { type: 'function', function: { index: 0, name: value.name, arguments: isObject(value.arguments) ? value.arguments : {} } }
}

/** A `think` level (`low`/`medium`/`high`); `true`/`false` have none. */
function thinkLevelOf(think: ThinkOption | undefined): ThinkLevel | undefined {
  if (think === 'max') return 'high' // the formats we drive (Harmony, reasoning_effort templates) stop at high
  return think === 'low' || think === 'medium' || think === 'high' ? think : undefined
}

/** A Jinja chat template that reads `reasoning_effort` (gpt-oss's convention for think levels). */
export function templateTakesLevels(template: string): boolean {
  return /\breasoning_effort\b/.test(template)
}

/** A streamed call's parameters text (JSON by grammar; `{}` when the function takes none). */
/**
 * The calls of one answer, numbered (none: `undefined`): node-llama-cpp's, or without its answer
 * (`callsOnInvalidArguments`) the calls as they were streamed.
 */
function toolCallsOf(
  res: { functionCalls?: ReadonlyArray<{ functionName: string; params: unknown }> } | undefined,
  streamed: ReadonlyArray<{ name: string; text: string }>,
): ToolCall[] | undefined {
  const made = res
    ? (res.functionCalls ?? []).map((c) => ({ name: c.functionName, arguments: c.params }))
    : streamed.map((c) => ({ name: c.name, arguments: parseArguments(c.text) }))
  if (made.length === 0) return undefined
  return made.map((c, index) => ({ type: 'function' as const, function: { index, name: c.name, arguments: (c.arguments ?? {}) as Record<string, unknown> } }))
}

function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {}
  try {
    const value = JSON.parse(text) as unknown
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

function numPredict(o: EngineOptions | undefined): number | undefined {
  const n = o?.num_predict
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return undefined
  return Math.floor(n)
}

function stopList(stop: string | string[] | undefined): string[] {
  if (stop === undefined) return []
  return (Array.isArray(stop) ? stop : [stop]).filter((s) => typeof s === 'string' && s !== '')
}

function findStop(text: string, stops: string[], from = 0): number | undefined {
  let best: number | undefined
  for (const s of stops) {
    const i = text.indexOf(s, from)
    if (i >= 0 && (best === undefined || i < best)) best = i
  }
  return best
}

/** Length of the longest tail of `text` that is a proper prefix of a stop sequence. */
function partialStopLength(text: string, stops: string[]): number {
  let best = 0
  for (const s of stops) {
    for (let n = Math.min(s.length - 1, text.length); n > best; n--) {
      if (text.endsWith(s.slice(0, n))) {
        best = n
        break
      }
    }
  }
  return best
}

/** A chat wrapper's or grammar's stop trigger: text → stop string; a single special token → stop token. */
function addStopTrigger(trigger: unknown, model: LlamaModel, stops: string[], stopTokens: Set<Token>): void {
  const parts: unknown[] = Array.isArray(trigger) ? trigger : (trigger as { values?: unknown[] })?.values ?? [trigger]
  let textOnly = ''
  for (const p of parts) {
    if (typeof p === 'string') {
      textOnly += p
    } else if (p && typeof p === 'object') {
      const o = p as { type?: string; value?: unknown; builtinToken?: string }
      if (o.type === 'specialTokensText' || (o as { constructor?: { name?: string } }).constructor?.name === 'SpecialTokensText') {
        const value = String(o.value ?? '')
        const ids = model.tokenize(value, true)
        if (ids.length === 1 && parts.length === 1) stopTokens.add(ids[0]!)
        else textOnly += value
      } else if (typeof o.value === 'string' && (o.type === 'specialToken' || (o as { constructor?: { name?: string } }).constructor?.name === 'SpecialToken')) {
        const builtin = o.value
        const id = builtin === 'EOS' ? model.tokens.eos : builtin === 'EOT' ? model.tokens.eot : builtin === 'BOS' ? model.tokens.bos : null
        if (id != null) stopTokens.add(id)
        return
      }
    } else if (typeof p === 'number') {
      stopTokens.add(p as unknown as Token)
      return
    }
  }
  if (textOnly !== '' && !stops.includes(textOnly)) stops.push(textOnly)
}

function tokenLogprob(
  model: LlamaModel,
  token: Token,
  out: { confidence?: number; probabilities?: Map<Token, number> },
  top: number,
): TokenLogprob {
  const piece = model.detokenize([token], false)
  const p = out.confidence ?? out.probabilities?.get(token) ?? 0
  const entry: TokenLogprob = { token: piece, logprob: Math.log(Math.max(p, Number.MIN_VALUE)), bytes: [...Buffer.from(piece, 'utf8')] }
  if (top > 0 && out.probabilities) {
    const alts: NonNullable<TokenLogprob['top_logprobs']> = []
    for (const [t, prob] of out.probabilities) {
      if (alts.length >= Math.min(top, 20)) break
      const altPiece = model.detokenize([t], false)
      alts.push({ token: altPiece, logprob: Math.log(Math.max(prob, Number.MIN_VALUE)), bytes: [...Buffer.from(altPiece, 'utf8')] })
    }
    entry.top_logprobs = alts
  }
  return entry
}

/**
 * node-llama-cpp's own refusals of a conversation that cannot fit the context whatever it drops (what it may not
 * drop — the system message, the tools' definitions — is longer than the context): the client's input, a 400
 * `input_too_long` as Ollama answers, not a failure of the server.
 */
const DOES_NOT_FIT = /did not return a history that fits the context size|context size is too small to generate/

/**
 * node-llama-cpp checks a call's arguments against the tool's schema once the grammar let them through, and throws
 * when they differ — which the grammar allows for one case: an integer written with an exponent past a double's
 * range (`4e2222` is Infinity, not an integer). Then `undefined`: the calls as they were streamed are the answer, as
 * Ollama answers what the model wrote, instead of a 500 after the call went out.
 */
async function callsOnInvalidArguments<T>(generating: Promise<T>): Promise<T | undefined> {
  try {
    return await inputThatFits(generating)
  } catch (error) {
    if (error instanceof LlamaJsonSchemaValidationError) return undefined
    throw error
  }
}

async function inputThatFits<T>(generating: Promise<T>): Promise<T> {
  try {
    return await generating
  } catch (error) {
    if (error instanceof Error && DOES_NOT_FIT.test(error.message)) {
      throw new EngineError('input_too_long', 'input exceeds maximum context length', { details: 'the system message and the tools do not fit the context', cause: error })
    }
    throw error
  }
}
