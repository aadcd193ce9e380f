/**
 * `/mcp` for both MCP revisions in use, against the whole gateway and the devnet peers: the MCP SDK's 2.x client
 * pinned to 2026-07-28 (stateless per-request envelope, `server/discover`, cache hints, `resultType`) and its 1.x
 * client (2025-11-25, `initialize`) each list the tools, get the x402 payment request of `store_file`, pay it and
 * store the file; a wrong argument is a tool result the model can read (`isError`), never a transport error; paid
 * `chat` takes a batch-settlement voucher; a sign-in-with-x proof in a call's `_meta` identifies the caller.
 */
import { mcpRawPost } from '../support/mcpRawPost.js'
import { Client as Client2026, StreamableHTTPClientTransport as Transport2026 } from '@modelcontextprotocol/client'
import { x402Client } from '@x402/core/client'
import type { PaymentRequired } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client'
import { encodeSIWxHeader } from '@x402/extensions/sign-in-with-x'
import { randomBytes } from 'node:crypto'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { evmEnv, type EvmPeers, payingClient, startEvmPeers } from '../storage/harness.js'
import { siwxProof } from '../support/siwxProof.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { callTool, mcpAgent, requirementOf, structured } from './mcpAgent.js'

let peers: EvmPeers
let engine: Engine
let ms: TestModelServer
let gw: TestGateway

beforeAll(async () => {
  peers = await startEvmPeers()
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      ...evmEnv(peers),
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1500',
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '0',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
      SERVICE_MCP__MAX_INLINE_BYTES: '65536',
      SERVICE_X402__BATCH__AUTHORIZER_KEY: generatePrivateKey(),
      SERVICE_X402__BATCH__CLAIM_INTERVAL_S: '0',
      SERVICE_LOGIN__CHAIN_ID: '8453',
    },
  })
  await gw.gateway.start()
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await peers?.close()
})

const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>

/** The 2.x client, negotiating exactly the 2026-07-28 revision (it fails instead of falling back). */
async function modernAgent(headers: Record<string, string> = {}) {
  const client = new Client2026({ name: 'test-agent-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await client.connect(new Transport2026(new URL(`${gw.url}/mcp`), { requestInit: { headers } }))
  return client
}

type AnyResult = { isError?: boolean; structuredContent?: unknown; content: unknown[]; _meta?: Record<string, unknown> }

/** The x402 requirement of a `store_file` result and a stock exact payment for it from `payer`, then the paid call's result. */
async function storeThroughMcp(call: (args: Record<string, unknown>, meta?: Record<string, unknown>) => Promise<AnyResult>, payer: number, data: Uint8Array) {
  const args = { data_base64: Buffer.from(data).toString('base64'), mime_type: 'application/octet-stream' }
  const required = requirementOf((await call(args)) as never)
  const before = await balanceOf(peers.base, anvilAccount(payer).address)
  const payload = await payingClient(peers.base, payer).createPaymentPayload(required)
  const paid = await call(args, { 'x402/payment': payload })
  const price = BigInt(required.accepts.find((a) => a.network === peers.base.network)!.amount)
  return { paid, price, before }
}

describe('the MCP 2.x client on 2026-07-28', () => {
  it('connects without initialize, lists the tools, is asked to pay, pays and stores a file', async () => {
    const client = await modernAgent()
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['chat', 'get_receipt', 'list_models', 'quote_storage', 'store_file', 'verify_upload'])
    const payer = 2
    const { paid, price, before } = await storeThroughMcp((args, _meta) => client.callTool({ name: 'store_file', arguments: args, ...(_meta ? { _meta } : {}) }) as Promise<AnyResult>, payer, randomBytes(2048))
    expect(paid.isError).toBeFalsy()
    expect(paid.structuredContent).toMatchObject({ status: expect.stringMatching(/^(stored|queued)$/) })
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true })
    expect(await balanceOf(peers.base, anvilAccount(payer).address)).toBe(before - price)
    await client.close()
    expect(gw.validationErrors).toEqual([])
  })

  it('answers handshake-free requests: server/discover, cache hints on the tool list, resultType on every result, no session', async () => {
    const post = mcpRawPost(gw.url)
    const discover = await post('server/discover')
    expect(discover.headers.get('mcp-session-id')).toBeNull()
    const found = (await discover.json()) as { result: Record<string, unknown> }
    expect(found.result).toMatchObject({ resultType: 'complete', supportedVersions: expect.arrayContaining(['2026-07-28']) })
    const listed = (await (await post('tools/list')).json()) as { result: Record<string, unknown> & { tools: unknown[] } }
    expect(listed.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' })
    expect(listed.result.tools).toHaveLength(6)
    const quoted = (await (await post('tools/call', { name: 'quote_storage', arguments: { bytes: 10 } })).json()) as { result: Record<string, unknown> }
    expect(quoted.result).toMatchObject({ resultType: 'complete', structuredContent: { quote: { size_bytes: 10 } } })
    expect(gw.validationErrors).toEqual([])
  })

  it('a wrong argument is a tool result with isError in the tool schema\'s Error shape, on both revisions', async () => {
    const modern = await modernAgent()
    const legacy = await mcpAgent(gw.url)
    for (const result of [
      (await modern.callTool({ name: 'store_file', arguments: { file_base64: 'aGVsbG8=' } })) as AnyResult,
      (await callTool(legacy, 'store_file', { file_base64: 'aGVsbG8=' })) as AnyResult,
      (await modern.callTool({ name: 'quote_storage', arguments: { bytes: 'many' } })) as AnyResult,
    ]) {
      expect(result.isError).toBe(true)
      expect(result.structuredContent).toEqual({ error: 'invalid_arguments', message: expect.any(String) })
    }
    await modern.close()
    await legacy.close()
    expect(gw.validationErrors).toEqual([])
  })
})

describe('the MCP 1.x client on 2025-11-25', () => {
  it('lists the tools, is asked to pay, pays and stores a file', async () => {
    const client = await mcpAgent(gw.url)
    const { tools } = await client.listTools()
    expect(tools).toHaveLength(6)
    const payer = 3
    const { paid, price, before } = await storeThroughMcp((args, meta) => callTool(client, 'store_file', args, meta?.['x402/payment']) as Promise<AnyResult>, payer, randomBytes(2048))
    expect(paid.isError).toBeFalsy()
    expect(structured(paid as never).upload_id).toMatch(/^upl_/)
    expect(await balanceOf(peers.base, anvilAccount(payer).address)).toBe(before - price)
    await client.close()
  })
})

describe('agents of both revisions on chat', () => {
  it('a sign-in-with-x proof in _meta identifies the caller; its chat is paid with a batch-settlement voucher', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const client = await modernAgent()
    const proof = async () => encodeSIWxHeader(await siwxProof(wallet, 'http://gw.test/mcp'))
    const chat = (meta: Record<string, unknown>) =>
      client.callTool({ name: 'chat', arguments: { messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 2 } }, _meta: meta }) as Promise<AnyResult>
    expect((await chat({})).structuredContent).toMatchObject({ error: 'auth_required' })
    // identified by the proof: past its quota of 0, the payment request, batch-settlement among its offers
    const required = (await chat({ 'sign-in-with-x': await proof() })).structuredContent as PaymentRequired
    expect(required.accepts.map((a) => a.scheme)).toContain('batch-settlement')
    const payer = anvilAccount(5)
    const signer = toClientEvmSigner(privateKeyToAccount(payer.privateKey), createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) }))
    const x402 = new x402Client((_v, accepts) => accepts.find((a) => a.scheme === 'batch-settlement' && a.network === peers.base.network)!)
      .register('eip155:*', new BatchSettlementEvmScheme(signer))
      .setSpendControls({ allowedAssets: [{ network: peers.base.network, asset: peers.base.tokenAddress }] })
    const payment = await x402.createPaymentPayload(required)
    const answered = await chat({ 'sign-in-with-x': await proof(), 'x402/payment': payment })
    expect(answered.isError).toBeFalsy()
    expect(answered._meta?.['x402/payment-response']).toMatchObject({ success: true, scheme: 'batch-settlement', payer: payer.address.toLowerCase() })
    // the call is the proof's wallet's
    const usage = await gw.database.db.selectFrom('llm_usage').select(['wallet', 'paid_by']).where('wallet', '=', wallet.address.toLowerCase()).execute()
    expect(usage).toEqual([{ wallet: wallet.address.toLowerCase(), paid_by: 'payment' }])
    await client.close()
  })
})
