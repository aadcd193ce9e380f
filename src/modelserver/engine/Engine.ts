/**
 * The inference engine of the model server: a framework-free wrapper around node-llama-cpp.
 *
 * The HTTP layer talks only to these types. One `Engine` per process (one llama.cpp backend,
 * CPU only, an explicit thread count). `loadModel` returns an `EngineModel`; the server decides
 * residency (keep_alive, memory budget) and calls `unload()`.
 *
 * Concurrency: each `EngineModel` serialises its requests in a FIFO (one context, one sequence);
 * `pending` tells the server how many requests are queued or running, so it can apply its own bound
 * and answer 503 `server busy` past it. Aborting (`signal`) a queued request removes it from the queue;
 * aborting a running one stops generation at the next token and resolves with what was produced so far
 * (`doneReason: 'stop'`, `aborted: true`) — the server stops streaming anyway.
 */

export type ModelKind = 'completion' | 'embedding'

export type Capability = 'completion' | 'embedding' | 'tools' | 'insert' | 'vision' | 'thinking'

/** Runtime options, Ollama's `options` object (unknown keys are ignored). */
export type EngineOptions = {
  /** Same seed + same options + same prompt → same output, across restarts. Undefined → a random seed. */
  seed?: number | undefined
  /** Default 0.8 (Ollama); 0 → greedy. */
  temperature?: number | undefined
  /** Default 40. */
  top_k?: number | undefined
  /** Default 0.9. */
  top_p?: number | undefined
  /** Default 0. */
  min_p?: number | undefined
  stop?: string | string[] | undefined
  /** Context window for this request; the model's context is (re)created at this size if it differs. */
  num_ctx?: number | undefined
  /** Max tokens to generate; -1 / undefined = unlimited (bounded by the context). */
  num_predict?: number | undefined
  [key: string]: unknown
}

/** `'json'` (any JSON value... an object, as Ollama) or a JSON schema object, enforced by grammar. */
export type EngineFormat = 'json' | Record<string, unknown>

/** `max` (Ollama 0.33): the deepest level; formats with three levels get `high`. */
export type ThinkOption = boolean | 'high' | 'medium' | 'low' | 'max'

/**
 * Whether the model must call a tool: `auto` lets it choose; `required` constrains generation (a grammar) to one
 * call of one of the offered tools. A named function is `required` with only that tool offered; `none` offers none.
 */
export type ToolChoice = 'auto' | 'required'

export type ToolDefinition = {
  type: 'function'
  function: {
    name: string
    description?: string
    parameters?: Record<string, unknown>
  }
}

export type ToolCall = {
  type?: 'function'
  function: {
    index?: number
    name: string
    arguments: Record<string, unknown>
  }
}

export type ChatMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  thinking?: string | undefined
  images?: string[] | undefined
  tool_calls?: ToolCall[] | undefined
  tool_name?: string | undefined
}

/** One Ollama `logprobs` entry. */
export type TokenLogprob = {
  token: string
  logprob: number
  bytes?: number[]
  top_logprobs?: Array<{ token: string; logprob: number; bytes?: number[] }>
}

/**
 * Streaming callback payload: exactly one of content/thinking/toolCalls is set (plus logprobs when requested).
 * A tool call is sent once, whole, as soon as the model has finished writing it (as Ollama streams calls).
 */
export type TokenChunk = {
  content?: string
  thinking?: string
  toolCalls?: ToolCall[]
  logprobs?: TokenLogprob[]
}

export type CommonGenerateParams = {
  format?: EngineFormat | undefined
  think?: ThinkOption | undefined
  options?: EngineOptions | undefined
  logprobs?: boolean | undefined
  /** Number of alternatives per position (0–20) when `logprobs` is true. */
  topLogprobs?: number | undefined
  signal?: AbortSignal | undefined
  onToken?: ((chunk: TokenChunk) => void) | undefined
  /**
   * Called once, when the prompt starts to be evaluated: every check of the input passed, the model is loaded and
   * the request's turn in the queue has come (a stream can commit to its status then). Not called where
   * node-llama-cpp's `LlamaChat` runs the generation (tools the model may call, thinking: it checks its input as
   * it runs; a required tool call is our own token loop and is told), nor when nothing is evaluated.
   */
  onStart?: (() => void) | undefined
  /** Ollama's `truncate` (default true): a prompt longer than the context keeps its start token and its most
   *  recent tokens; false → `EngineInputTooLongError`. */
  truncate?: boolean | undefined
  /** Ollama's `shift`: true → when the context fills during generation, its oldest tokens (after the start
   *  token) are dropped and generation goes on (up to `num_predict`, at most 4 contexts' worth when unbounded);
   *  false or absent → generation stops there with `doneReason: 'length'`. */
  shift?: boolean | undefined
}

export type CompleteParams = CommonGenerateParams & {
  prompt: string
  /** Fill-in-the-middle; throws `EngineInsertUnsupportedError` when the model lacks the `insert` capability. */
  suffix?: string | undefined
  /** Overrides the model's default system prompt (ignored with `raw`). */
  system?: string | undefined
  /** Skip the chat template: the prompt is tokenised as is. */
  raw?: boolean | undefined
}

export type ChatParams = CommonGenerateParams & {
  messages: ChatMessage[]
  tools?: ToolDefinition[] | undefined
  /** Default `auto`. */
  toolChoice?: ToolChoice | undefined
}

export type GenerationResult = {
  content: string
  thinking?: string | undefined
  toolCalls?: ToolCall[] | undefined
  doneReason: 'stop' | 'length'
  /** True when the request's signal aborted the generation. */
  aborted?: boolean
  promptEvalCount: number
  evalCount: number
  promptEvalDurationNs: number
  evalDurationNs: number
  /** Total time in the engine for this request including queue wait. */
  totalDurationNs: number
  logprobs?: TokenLogprob[] | undefined
}

export type EmbedParams = {
  inputs: string[]
  /** Default true: over-long inputs are cut to the context; false → `EngineInputTooLongError`. */
  truncate?: boolean | undefined
  /** Truncate each vector to this length, then re-normalise. */
  dimensions?: number | undefined
  options?: EngineOptions | undefined
  signal?: AbortSignal | undefined
}

export type EmbedResult = {
  /** L2-normalised, one per input, in order. */
  embeddings: number[][]
  promptEvalCount: number
  totalDurationNs: number
}

export type ModelInfo = {
  architecture: string
  /** Total number of weights (from `general.parameter_count` or counted from tensors). */
  parameterCount: number
  /** Ollama-style label, e.g. `"1.7B"`, `"210.50K"`. */
  parameterSize: string
  /** Trained context length. */
  contextLength: number
  embeddingLength: number
  blockCount: number
  /** Ollama-style quantization level, e.g. `F32`, `Q4_K_M`. */
  quantizationLevel: string
  fileType: number | undefined
  capabilities: Capability[]
  /** The chat template from the GGUF (`tokenizer.chat_template`), '' if none. */
  template: string
  /** The full GGUF metadata flattened to dotted keys (`general.architecture`, `llama.block_count`...).
   *  Large arrays (tokenizer vocab) are included; the server trims them unless `verbose`. */
  metadata: Record<string, unknown>
}

export type LoadModelParams = {
  path: string
  /** The name clients use (for error messages such as `<name> does not support insert`). */
  name?: string | undefined
  /** Default 2048; capped at the trained context. */
  numCtx?: number | undefined
  /** Default: 'embedding' if the GGUF declares pooling / is an encoder, else 'completion'. */
  kind?: ModelKind | undefined
  signal?: AbortSignal | undefined
}

export interface EngineModel {
  readonly path: string
  readonly name: string
  readonly kind: ModelKind
  readonly info: ModelInfo
  /** Active context size in tokens. */
  readonly contextLength: number
  /** Bytes held in memory for weights + context (for /api/ps `size` and the memory budget). */
  readonly sizeBytes: number
  readonly loadDurationNs: number
  /** Requests queued or running on this model. */
  readonly pending: number
  complete(params: CompleteParams): Promise<GenerationResult>
  chat(params: ChatParams): Promise<GenerationResult>
  embed(params: EmbedParams): Promise<EmbedResult>
  /** Frees the context(s) and weights; further calls throw `EngineModelUnloadedError`. */
  unload(): Promise<void>
}

export interface Engine {
  readonly threads: number
  /** llama.cpp warnings and errors logged since the engine started (a healthy model load adds none). */
  readonly warnings: readonly string[]
  loadModel(params: LoadModelParams): Promise<EngineModel>
  /**
   * Reads a GGUF's metadata without loading weights (for /api/show on an unloaded model, /api/create, a model put or
   * pulled through the registry); throws when the file is not a whole model (no architecture, no tensors, cut off).
   */
  inspect(path: string): Promise<ModelInfo>
  dispose(): Promise<void>
}
