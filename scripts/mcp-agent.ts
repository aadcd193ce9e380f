/**
 * An agent that stores a file through the gateway's MCP endpoint and pays with x402 — the example of
 * docs/partners.md, and the check that `npm start` serves the whole flow: the MCP SDK's client over Streamable
 * HTTP lists the tools, calls `store_file` without payment (the requirement comes back as an error result),
 * signs the EIP-3009 authorization with the stock `@x402/core` client and `@x402/evm`'s exact scheme, calls
 * again with it in `_meta["x402/payment"]`, and polls `verify_upload` until the upload is verified.
 *
 *   npx tsx scripts/mcp-agent.ts <file> [--gateway http://127.0.0.1:8000] [--devnet-file data/devnet.json]
 *
 * The payer: `PAYER_KEY` (0x…, holding USDC on Base) and `PAYER_RPC_URL`; with `--devnet-file` (what `npm start`
 * wrote) the devnet's payer #2 and its local Base.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { x402Client } from '@x402/core/client'
import type { PaymentRequired } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvilAccount } from '../devnet/accounts.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { gateway: { type: 'string', default: 'http://127.0.0.1:8000' }, 'devnet-file': { type: 'string' } } })
const file = positionals[0]
if (!file) throw new Error('usage: tsx scripts/mcp-agent.ts <file> [--gateway URL] [--devnet-file data/devnet.json]')
const devnet = values['devnet-file'] ? (JSON.parse(readFileSync(values['devnet-file'], 'utf8')) as { chains?: Record<string, { rpcUrl?: string; url?: string }> }) : undefined
const rpcUrl = process.env.PAYER_RPC_URL ?? devnetBaseRpc() ?? 'http://127.0.0.1:8545'
const key = (process.env.PAYER_KEY ?? (devnet ? anvilAccount(2).privateKey : undefined)) as `0x${string}` | undefined
if (!key) throw new Error('set PAYER_KEY (or --devnet-file)')

function devnetBaseRpc(): string | undefined {
  const chain = devnet?.chains?.['8453'] ?? devnet?.chains?.['eip155:8453']
  return chain?.rpcUrl ?? chain?.url
}

const t0 = Date.now()
const log = (line: string) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}\n`)
const agent = new Client({ name: 'pay2store-example-agent', version: '1.0.0' })
await agent.connect(new StreamableHTTPClientTransport(new URL('/mcp', values.gateway)))
log(`tools: ${(await agent.listTools()).tools.map((t) => t.name).join(', ')}`)

const data = readFileSync(file).toString('base64')
const first = (await agent.callTool({ name: 'store_file', arguments: { data_base64: data } })) as CallToolResult
const required = first.structuredContent as unknown as PaymentRequired
if (!first.isError || required?.x402Version !== 2) throw new Error(`expected a payment requirement: ${JSON.stringify(first)}`)
const base = required.accepts.find((a) => a.network === 'eip155:8453')!
log(`price: ${base.amount} atomic USDC on ${base.network} to ${base.payTo}`)

const account = privateKeyToAccount(key)
const payer = new x402Client((_v, accepts) => accepts.find((a) => a.network === 'eip155:8453')!).register(
  'eip155:*',
  new ExactEvmScheme(toClientEvmSigner(account, createPublicClient({ transport: http(rpcUrl) }))),
)
const payment = await payer.createPaymentPayload(required)
const paid = (await agent.callTool({ name: 'store_file', arguments: { data_base64: data }, _meta: { 'x402/payment': payment } })) as CallToolResult
if (paid.isError) throw new Error(`refused: ${JSON.stringify(paid.structuredContent)}`)
const result = paid.structuredContent as { upload_id: string; arTxId: string; links: Record<string, string> }
log(`stored ${result.arTxId} (upload ${result.upload_id}); settlement ${JSON.stringify(paid._meta?.['x402/payment-response'])}`)

for (;;) {
  const status = ((await agent.callTool({ name: 'verify_upload', arguments: { upload_id: result.upload_id } })) as CallToolResult).structuredContent as { status: string }
  if (status.status === 'verified' || status.status === 'verify_failed') {
    log(`upload ${status.status}; receipt: ${result.links.receipt}`)
    break
  }
  await new Promise((r) => setTimeout(r, 1000))
}
await agent.close()
