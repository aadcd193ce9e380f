/**
 * The MCP endpoint as agents use it: the MCP SDK's own client over Streamable HTTP against the whole
 * gateway (`createApp`, response validation `error`) and the devnet peers (two Anvil chains with the EIP-3009
 * USDC, the x402 facilitator, the storage upstream and the Arweave gateway, a live model server). Payments are
 * made by the stock `@x402/core` client with `@x402/evm`'s exact scheme and sent per x402's MCP transport
 * (`_meta["x402/payment"]`). Attacker tests: a replay through MCP, the same payment through `/store` (and the
 * other way round), an underpayment, a URL outside the allow-list.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { evmEnv, type EvmPeers, multipart, payingClient, startEvmPeers } from '../storage/harness.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { base64, callTool, mcpAgent, requirementOf, storeFilePayment, structured, untilVerified } from './mcpAgent.js'

const CALL_PRICE = 1_500n
const PAYER = 4

let peers: EvmPeers
let engine: Engine
let ms: TestModelServer
let gw: TestGateway
let token: string
let files: Server
let filesOrigin: string
const served = randomBytes(3000)

beforeAll(async () => {
  // an allowed origin `store_file` may fetch from
  files = createServer((req, res) => {
    if (req.url === '/file.bin') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(served)
    if (req.url === '/elsewhere') return void res.writeHead(302, { location: 'http://127.0.0.1:9/secret' }).end()
    res.writeHead(404).end()
  })
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r))
  filesOrigin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`
  peers = await startEvmPeers()
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      ...evmEnv(peers),
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: CALL_PRICE.toString(),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '1',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
      SERVICE_MCP__FETCH_ORIGINS: filesOrigin,
      SERVICE_MCP__MAX_INLINE_BYTES: '65536',
    },
  })
  await gw.gateway.start() // the storage worker: upload queue and verification
  token = await gw.login(privateKeyToAccount(generatePrivateKey()))
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await peers?.close()
  await new Promise((r) => files?.close(r))
})

const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

const agent = (headers: Record<string, string> = {}) => mcpAgent(gw.url, headers)
const call = callTool
const b64 = base64
const payer = anvilAccount(PAYER).address

const mcpPayment = (client: Client, data: Uint8Array, amount?: (a: bigint) => bigint) => storeFilePayment(client, peers.base, PAYER, data, amount)

describe('tools', () => {
  it('lists the six tools with the document\'s schemas, quotes, lists models, and the discovery document names them with prices', async () => {
    const client = await agent()
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['chat', 'get_receipt', 'list_models', 'quote_storage', 'store_file', 'verify_upload'])
    const store = tools.find((t) => t.name === 'store_file')!
    expect(Object.keys(store.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['data_base64', 'url', 'mime_type', 'app_name']))
    expect(JSON.stringify(tools)).not.toContain('$ref')
    const quote = await call(client, 'quote_storage', { bytes: 1024 })
    expect(quote.isError).toBeFalsy()
    expect(structured(quote).quote).toMatchObject({ size_bytes: 1024 })
    const models = await call(client, 'list_models', {})
    expect(structured(models).object).toBe('list')
    // arguments that break the tool's schema: a tool result the model can read (isError), never a transport error
    const negative = await call(client, 'quote_storage', { bytes: -1 })
    expect(negative.isError).toBe(true)
    expect(structured(negative)).toMatchObject({ error: 'invalid_arguments', message: expect.stringContaining('bytes') })
    // arguments of another tool: refused by the tool against its own input schema
    const bad = await call(client, 'quote_storage', { upload_id: 'upl_01JD7ZK4W1Q9X3M2N5P6R8S0TV' })
    expect(bad.isError).toBe(true)
    expect(structured(bad).error).toBe('invalid_arguments')

    const discovery = (await (await fetch(`${gw.url}/.well-known/x402`)).json()) as { resources: string[]; mcp: { endpoint: string; tools: { name: string; price: { kind: string; amount?: string } ; extensions?: { bazaar: { info: { input: { type: string; toolName: string } } } } }[] } }
    expect(discovery.resources).toContain(discovery.mcp.endpoint)
    const byName = new Map(discovery.mcp.tools.map((t) => [t.name, t]))
    expect(byName.get('store_file')!.price.kind).toBe('per_byte')
    expect(byName.get('store_file')!.extensions!.bazaar.info.input).toMatchObject({ type: 'mcp', toolName: 'store_file' })
    expect(byName.get('chat')!.price).toEqual({ kind: 'per_call', amount: CALL_PRICE.toString() })
    expect(byName.get('get_receipt')!.price.kind).toBe('free')
    await client.close()
    expect(gw.validationErrors).toEqual([])
  })
})

describe('store_file paid per x402 over MCP', () => {
  it('402 as an error result, paid through _meta, stored, settled in _meta, and ends verified with a receipt', async () => {
    const client = await agent()
    const data = randomBytes(4096)
    const before = await balanceOf(peers.base, payer)
    const { required, payload, price } = await mcpPayment(client, data)
    expect(required.accepts.map((a) => a.network)).toEqual([peers.base.network, peers.mainnet.network, expect.stringMatching(/^algorand:/)])
    expect(required.resource?.url).toMatch(/\/mcp$/)
    expect((required.extensions as { bazaar: { info: { input: { type: string } } } }).bazaar.info.input.type).toBe('mcp')

    const paid = await call(client, 'store_file', { data_base64: b64(data), mime_type: 'application/octet-stream' }, payload)
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    const result = structured(paid) as { arTxId: string; upload_id: string; status: string; sizeBytes: number; links: { status: string; receipt: string } }
    expect(result.status).toBe('stored')
    expect(result.sizeBytes).toBe(4096)
    const settlement = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string; network: string; payer: string }
    expect(settlement).toMatchObject({ success: true, network: peers.base.network })
    expect(settlement.payer.toLowerCase()).toBe(payer.toLowerCase())
    expect(before - (await balanceOf(peers.base, payer))).toBe(price)

    expect(await untilVerified(client, result.upload_id, 30_000)).toBe('verified')
    const receipt = await call(client, 'get_receipt', { ar_tx_id: result.arTxId })
    expect(receipt.isError, JSON.stringify(receipt)).toBeFalsy()
    expect(structured(receipt).ar_tx_id).toBe(result.arTxId)
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 60_000)

  it('attacker: the same payment again through MCP is refused (payment_replayed), and through POST /store too (409); nothing more moves', async () => {
    const client = await agent()
    const data = randomBytes(2048)
    const { payload, header, price } = await mcpPayment(client, data)
    const before = await balanceOf(peers.base, payer)
    expect((await call(client, 'store_file', { data_base64: b64(data) }, payload)).isError).toBeFalsy()
    // a different file with the same payment: payment-identifier does not apply, the claim does
    const replay = await call(client, 'store_file', { data_base64: b64(randomBytes(2048)) }, payload)
    expect(replay.isError).toBe(true)
    expect(structured(replay).error).toBe('payment_replayed')
    const again = await call(client, 'store_file', { data_base64: b64(data) }, payload)
    expect(structured(again).error).toBe('payment_replayed')
    const http402 = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    expect(http402.status).toBe(409)
    expect(((await http402.json()) as { error: string }).error).toBe('payment_replayed')
    expect(before - (await balanceOf(peers.base, payer))).toBe(price)
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 60_000)

  it('attacker: a payment used on POST /store first is refused by store_file (payment_replayed), nothing stored twice', async () => {
    const client = await agent()
    const data = randomBytes(2048)
    const { payload, header, price } = await mcpPayment(client, data)
    const before = await balanceOf(peers.base, payer)
    const viaHttp = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    expect(viaHttp.status, await viaHttp.clone().text()).toBe(200)
    const uploads = (await gw.gateway.services.db.selectFrom('storage_uploads').select('upload_id').execute()).length
    const replay = await call(client, 'store_file', { data_base64: b64(data) }, payload)
    expect(replay.isError).toBe(true)
    expect(structured(replay).error).toBe('payment_replayed')
    expect((await gw.gateway.services.db.selectFrom('storage_uploads').select('upload_id').execute()).length).toBe(uploads)
    expect(before - (await balanceOf(peers.base, payer))).toBe(price)
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 60_000)

  it('attacker: an underpayment (price − 1) is refused with the requirements again (insufficient_amount); nothing moves', async () => {
    const client = await agent()
    const data = randomBytes(2048)
    const { payload } = await mcpPayment(client, data, (a) => a - 1n)
    const before = await balanceOf(peers.base, payer)
    const refused = await call(client, 'store_file', { data_base64: b64(data) }, payload)
    const required = requirementOf(refused)
    expect(required.error).toBe('insufficient_amount')
    expect(required.accepts.length).toBe(3)
    expect(await balanceOf(peers.base, payer)).toBe(before)
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 60_000)

  it('a url on an allowed origin is fetched and paid for like inline bytes; another origin, a redirect and an oversized inline file are refused', async () => {
    const client = await agent()
    const required = requirementOf(await call(client, 'store_file', { url: `${filesOrigin}/file.bin` }))
    const x402 = payingClient(peers.base, PAYER)
    const paid = await call(client, 'store_file', { url: `${filesOrigin}/file.bin` }, await x402.createPaymentPayload(required))
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    expect(structured(paid).sizeBytes).toBe(served.length)
    const outside = await call(client, 'store_file', { url: 'http://127.0.0.1:9/secret' })
    expect(structured(outside).error).toBe('url_not_allowed')
    const redirected = await call(client, 'store_file', { url: `${filesOrigin}/elsewhere` })
    expect(structured(redirected).error).toBe('url_fetch_failed')
    const large = await call(client, 'store_file', { data_base64: b64(randomBytes(65_537)) })
    expect(structured(large).error).toBe('payload_too_large')
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 60_000)
})

describe('chat over MCP', () => {
  const ask = { messages: [{ role: 'user', content: 'Hello' }], options: { num_predict: 6, seed: 3 } }

  it('needs an identity; within the quota it answers; past it the x402 requirement, paid through _meta and settled once; a replay is refused', async () => {
    const anonymous = await agent()
    expect(structured(await call(anonymous, 'chat', ask)).error).toBe('auth_required')
    await anonymous.close()

    const client = await agent({ 'x-session-token': token })
    const free = await call(client, 'chat', ask)
    expect(free.isError, JSON.stringify(free)).toBeFalsy()
    expect((structured(free).message as { role: string }).role).toBe('assistant')
    expect(free._meta?.['x402/payment-response']).toBeUndefined()

    const required = requirementOf(await call(client, 'chat', ask))
    expect(required.error).toBe('quota_exceeded')
    expect(BigInt(required.accepts[0]!.amount)).toBe(CALL_PRICE)
    const x402 = payingClient(peers.base, PAYER)
    const payload = await x402.createPaymentPayload(required)
    const before = await balanceOf(peers.base, payer)
    const paid = await call(client, 'chat', ask, payload)
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    expect((structured(paid).message as { role: string }).role).toBe('assistant')
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: peers.base.network })
    expect(before - (await balanceOf(peers.base, payer))).toBe(CALL_PRICE)
    const replay = await call(client, 'chat', ask, payload)
    expect(structured(replay).error).toBe('payment_replayed')
    expect(before - (await balanceOf(peers.base, payer))).toBe(CALL_PRICE)
    // both calls are in the usage ledger: one on the quota, one paid
    await new Promise((r) => setTimeout(r, 300))
    const rows = await gw.gateway.services.db.selectFrom('llm_usage').select(['paid_by', 'route']).where('route', '=', 'mcpCall').execute()
    expect(rows.map((r) => r.paid_by).sort()).toEqual(['payment', 'quota'])
    await client.close()
    expect(gw.validationErrors).toEqual([])
  }, 90_000)
})

