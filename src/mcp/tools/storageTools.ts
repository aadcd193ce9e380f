import type { CallToolResult } from '@modelcontextprotocol/server'
import type { StorageService, StoreOutcome } from '../../storage/StorageService.js'
import { paymentResponse } from '../../storage/StorageService.js'
import { PaymentRequiredError, paymentIdentifierExtensions } from '../../x402/index.js'
import type { McpConfig } from '../config.js'
import { InvalidToolArgumentsError, ToolPayloadTooLargeError } from '../errors.js'
import { fetchAllowed } from '../fetchAllowed.js'
import { MCP_PATH, type McpTool, type ToolCall, type ToolContext } from '../McpTool.js'
import { META_PAYMENT, okResult, paymentRequiredResult } from '../toolResults.js'

/** What paid storage's tools call: the service `POST /store` calls (no second path where money moves). */
export type StorageToolPorts = {
  storage: Pick<StorageService, 'quote' | 'storeBytes' | 'getUpload'>
  /** Origin of the links a result gives (`SERVICE_PUBLIC_ORIGIN`). */
  publicOrigin: string
  config: McpConfig
  fetch?: typeof fetch | undefined
}

/** Paid storage's tools: `quote_storage`, `store_file` (paid per byte, like `POST /store`) and `verify_upload`. */
export function storageTools(ports: StorageToolPorts): McpTool[] {
  return [
    { name: 'quote_storage', call: (call) => quote(ports, call) },
    { name: 'store_file', call: (call, context) => store(ports, call, context) },
    { name: 'verify_upload', call: async (call) => okResult((await ports.storage.getUpload(String(call.arguments.upload_id))) as unknown as Record<string, unknown>) },
  ]
}

async function quote(ports: StorageToolPorts, call: ToolCall): Promise<CallToolResult> {
  const bytes = call.arguments.bytes
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 1) throw new InvalidToolArgumentsError('bytes must be a positive integer')
  const mimeType = typeof call.arguments.mime_type === 'string' ? call.arguments.mime_type : undefined
  const { body } = await ports.storage.quote(BigInt(bytes), { mimeType, path: MCP_PATH })
  return okResult(body as unknown as Record<string, unknown>)
}

async function store(ports: StorageToolPorts, call: ToolCall, context: ToolContext): Promise<CallToolResult> {
  const { data_base64: inline, url, mime_type: mime, app_name: appName } = call.arguments
  if ((inline === undefined) === (url === undefined)) throw new InvalidToolArgumentsError('give exactly one of data_base64 and url')
  const { bytes, mimeType } = typeof inline === 'string' ? { bytes: decodeInline(inline, ports.config), mimeType: undefined } : await fetchUrl(ports, String(url), call.signal)
  const payment = call.meta?.[META_PAYMENT]
  let outcome: StoreOutcome
  try {
    outcome = await ports.storage.storeBytes(
      { bytes, mimeType: (typeof mime === 'string' ? mime : undefined) ?? mimeType ?? 'application/octet-stream', payment, appName: typeof appName === 'string' ? appName : undefined },
      MCP_PATH,
      { clientAddress: call.clientAddress, extensions: { ...paymentIdentifierExtensions, ...context.extensions } },
    )
  } catch (error) {
    if (error instanceof PaymentRequiredError) return paymentRequiredResult(error.body as unknown as Record<string, unknown>)
    throw error
  }
  return storeResult(outcome, ports.publicOrigin)
}

function decodeInline(inline: string, config: McpConfig): Uint8Array {
  // base64 decodes to at most 3/4 of its length: refuse before decoding what could not fit
  if (Math.floor((inline.length * 3) / 4) > config.maxInlineBytes + 2) throw new ToolPayloadTooLargeError('data_base64', config.maxInlineBytes)
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(inline) || inline.length % 4 !== 0) throw new InvalidToolArgumentsError('data_base64 is not base64')
  const bytes = Buffer.from(inline, 'base64')
  if (bytes.length > config.maxInlineBytes) throw new ToolPayloadTooLargeError('data_base64', config.maxInlineBytes)
  return bytes
}

async function fetchUrl(ports: StorageToolPorts, url: string, signal: AbortSignal): Promise<{ bytes: Uint8Array; mimeType: string | undefined }> {
  const { config } = ports
  return fetchAllowed(url, { origins: config.fetchOrigins, maxBytes: config.maxFetchBytes, timeoutMs: config.fetchTimeoutMs, signal, fetch: ports.fetch })
}

function storeResult(outcome: StoreOutcome, origin: string): CallToolResult {
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
