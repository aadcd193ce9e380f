import type { CallToolResult } from '@modelcontextprotocol/server'
import type { StorageService, StoreOutcome } from '../storage/StorageService.js'
import { paymentResponse } from '../storage/StorageService.js'
import { decodeBase64Json, HEADER_PAYMENT_RESPONSE, PaymentRequiredError, paymentIdentifierExtensions } from '../x402/index.js'
import type { McpConfig } from './config.js'
import { InvalidToolArgumentsError, ToolPayloadTooLargeError } from './errors.js'
import { fetchAllowed } from './fetchAllowed.js'
import { mcpToolExtensions } from './mcpDiscovery.js'
import type { McpToolSpec } from './toolCatalog.js'
import { errorResult, META_PAYMENT, okResult, paymentRequiredResult } from './toolResults.js'

/** Who calls, when the request named someone (session token or `/llm` key); tools that need it refuse without. */
export type McpCaller = { wallet: string; tier: 'overlord' | 'session' | 'api_key' }

/** A metered answer as the cost routes give it (`meterCostCall`): status, body, headers. */
export type MeteredAnswer = { status: number; body?: unknown; headers?: Record<string, unknown> | undefined }

/** What the tools call: the existing services, handed in by the HTTP side (no second path where money moves). */
export type McpToolPorts = {
  storage: Pick<StorageService, 'quote' | 'storeBytes' | 'getUpload'>
  /** `GET /store/receipts/{ar_tx_id}`'s service. */
  receipt: (arTxId: string) => Promise<unknown>
  /** `GET /llm/v1/models`' answer (the model list, or the `Error` of an unreachable model server). */
  listModels: (signal: AbortSignal) => Promise<MeteredAnswer>
  /**
   * One chat call metered like `POST /llm/chat`: the caller's quota (its wallet's and its network's), or the
   * payment (the `PaymentPayload` as sent) when there is one, capped at what it pays for and settled only once
   * the call produced its answer; recorded in the usage ledger.
   */
  chat: (call: { caller: McpCaller; request: Record<string, unknown>; payment: unknown; clientAddress: string | undefined; signal: AbortSignal }) => Promise<MeteredAnswer>
  /**
   * Lets one more tool call of this request through the per-address rate limit, or says when to retry: each
   * tool call counts like a request of its HTTP twin (`undefined`: let through).
   */
  admit?: () => Promise<{ retryAfterS: number } | undefined>
  /** The catalogue's status and `Error` body of a thrown domain error; `undefined`: not catalogued (a fault). */
  describeError: (error: unknown) => { status: number; body?: unknown } | undefined
  /** Origin of the links a result gives (`SERVICE_PUBLIC_ORIGIN`). */
  publicOrigin: string
  config: McpConfig
  fetch?: typeof fetch
}

export type ToolCall = {
  name: string
  arguments: Record<string, unknown>
  /** The request's `_meta` (where x402 puts the payment). */
  meta: Record<string, unknown> | undefined
  caller: McpCaller | undefined
  /** The client's address as the gateway sees it (the store intake's per-address bounds). */
  clientAddress: string | undefined
  signal: AbortSignal
}

/** The resource every MCP payment binds (requirements, Algorand note): the endpoint itself. */
export const MCP_PATH = '/mcp'

/**
 * The MCP tools, framework-free: each one calls the service its HTTP route calls, and turns the outcome into
 * a tool result — x402's MCP transport for payment (`isError` + `PaymentRequired` in `structuredContent`,
 * the payment read from `_meta["x402/payment"]`, the settlement in `_meta["x402/payment-response"]`), the
 * catalogue's `Error` body for any other refusal.
 */
export class McpTools {
  readonly catalog: McpToolSpec[]
  readonly #ports: McpToolPorts
  readonly #specs: Map<string, McpToolSpec>
  /** The Bazaar declaration each paid tool's 402 carries. */
  readonly #extensions: Map<string, Record<string, unknown>>

  constructor(catalog: McpToolSpec[], ports: McpToolPorts) {
    this.catalog = catalog
    this.#ports = ports
    this.#specs = new Map(catalog.map((t) => [t.name, t]))
    this.#extensions = new Map(catalog.filter((t) => t.payment !== 'none').map((t) => [t.name, mcpToolExtensions(t)]))
  }

  has(name: string): boolean {
    return this.#specs.has(name)
  }

  async call(call: ToolCall): Promise<CallToolResult> {
    const limited = await this.#ports.admit?.()
    if (limited) {
      return errorResult({ error: 'rate_limited', message: `too many requests; retry after ${limited.retryAfterS} s`, details: { retry_after_s: limited.retryAfterS } })
    }
    const problem = this.#specs.get(call.name)?.checkArguments(call.arguments)
    if (problem) return errorResult({ error: 'invalid_arguments', message: problem })
    try {
      switch (call.name) {
        case 'quote_storage':
          return await this.#quote(call)
        case 'store_file':
          return await this.#store(call)
        case 'get_receipt':
          return okResult((await this.#ports.receipt(String(call.arguments.ar_tx_id))) as Record<string, unknown>)
        case 'verify_upload':
          return okResult((await this.#ports.storage.getUpload(String(call.arguments.upload_id))) as unknown as Record<string, unknown>)
        case 'list_models': {
          const answer = await this.#ports.listModels(call.signal)
          return answer.status >= 400 ? errorResult(answer.body as { error: string; message: string }) : okResult(answer.body as Record<string, unknown>)
        }
        case 'chat':
          return await this.#chat(call)
        default:
          return errorResult({ error: 'unknown_tool', message: `no tool ${call.name}` })
      }
    } catch (error) {
      const described = this.#ports.describeError(error)
      if (!described) throw error
      return errorResult(described.body as { error: string; message: string })
    }
  }

  async #quote(call: ToolCall): Promise<CallToolResult> {
    const bytes = call.arguments.bytes
    if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 1) throw new InvalidToolArgumentsError('bytes must be a positive integer')
    const mimeType = typeof call.arguments.mime_type === 'string' ? call.arguments.mime_type : undefined
    const { body } = await this.#ports.storage.quote(BigInt(bytes), { mimeType, path: MCP_PATH })
    return okResult(body as unknown as Record<string, unknown>)
  }

  async #store(call: ToolCall): Promise<CallToolResult> {
    const { data_base64: inline, url, mime_type: mime, app_name: appName } = call.arguments
    if ((inline === undefined) === (url === undefined)) throw new InvalidToolArgumentsError('give exactly one of data_base64 and url')
    const { config } = this.#ports
    let bytes: Uint8Array
    let mimeType = typeof mime === 'string' ? mime : undefined
    if (typeof inline === 'string') {
      // base64 decodes to at most 3/4 of its length: refuse before decoding what could not fit
      if (Math.floor((inline.length * 3) / 4) > config.maxInlineBytes + 2) throw new ToolPayloadTooLargeError('data_base64', config.maxInlineBytes)
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(inline) || inline.length % 4 !== 0) throw new InvalidToolArgumentsError('data_base64 is not base64')
      bytes = Buffer.from(inline, 'base64')
      if (bytes.length > config.maxInlineBytes) throw new ToolPayloadTooLargeError('data_base64', config.maxInlineBytes)
    } else {
      const fetched = await fetchAllowed(String(url), { origins: config.fetchOrigins, maxBytes: config.maxFetchBytes, timeoutMs: config.fetchTimeoutMs, signal: call.signal, fetch: this.#ports.fetch })
      bytes = fetched.bytes
      mimeType ??= fetched.mimeType
    }
    const payment = call.meta?.[META_PAYMENT]
    let outcome: StoreOutcome
    try {
      outcome = await this.#ports.storage.storeBytes(
        { bytes, mimeType: mimeType ?? 'application/octet-stream', payment, appName: typeof appName === 'string' ? appName : undefined },
        MCP_PATH,
        { clientAddress: call.clientAddress, extensions: { ...paymentIdentifierExtensions, ...this.#extensions.get('store_file') } },
      )
    } catch (error) {
      if (error instanceof PaymentRequiredError) return paymentRequiredResult(error.body as unknown as Record<string, unknown>)
      throw error
    }
    return this.#storeResult(outcome)
  }

  #storeResult(outcome: StoreOutcome): CallToolResult {
    const origin = this.#ports.publicOrigin
    if (outcome.status === 202) {
      const { queue_id: uploadId, deposit } = outcome.body
      const settlement = { success: true, transaction: deposit.tx_hash, network: deposit.network, payer: deposit.payer }
      return okResult({ upload_id: uploadId, status: 'queued', settlement, links: { status: `${origin}/store/uploads/${uploadId}` } }, settlement)
    }
    const result = outcome.body
    return okResult(
      {
        ...result,
        upload_id: outcome.uploadId,
        status: 'stored',
        links: { status: `${origin}/store/uploads/${outcome.uploadId}`, receipt: `${origin}/store/receipts/${result.arTxId}` },
      },
      paymentResponse(result),
    )
  }

  async #chat(call: ToolCall): Promise<CallToolResult> {
    if (!call.caller) {
      return errorResult({ error: 'auth_required', message: 'chat needs an identity: send X-Session-Token, Authorization: Bearer with a session token or an /llm API key, or a sign-in-with-x proof (the SIGN-IN-WITH-X header or _meta["sign-in-with-x"])' })
    }
    // a tool result is whole: no NDJSON stream
    const request = { ...call.arguments, stream: false }
    const answer = await this.#ports.chat({ caller: call.caller, request, payment: call.meta?.[META_PAYMENT], clientAddress: call.clientAddress, signal: call.signal })
    if (answer.status === 402) {
      const body = answer.body as Record<string, unknown>
      const extensions = { ...(body.extensions as Record<string, unknown> | undefined), ...this.#extensions.get('chat') }
      return paymentRequiredResult({ ...body, extensions })
    }
    if (answer.status >= 400) return errorResult(answer.body as { error: string; message: string })
    const header = answer.headers?.[HEADER_PAYMENT_RESPONSE]
    const settlement = typeof header === 'string' ? (decodeBase64Json(header, HEADER_PAYMENT_RESPONSE) as Record<string, unknown>) : undefined
    return okResult(answer.body as Record<string, unknown>, settlement)
  }
}
