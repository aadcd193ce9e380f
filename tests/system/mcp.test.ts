/**
 * MCP with x402 against `npm start`: the MCP SDK's own client over Streamable HTTP against the started
 * gateway's `/mcp` lists the tools, gets the payment requirement of `store_file`, pays it with the stock
 * `@x402/core` client and `@x402/evm`'s exact scheme on the devnet's local Base, and the upload ends verified
 * (the gateway's own storage worker against the devnet upstream and Arweave gateway); the same payment is then
 * refused through MCP and through `POST /store`, and nothing more moves on the chain. The shared system of the
 * browser project: its defaults suffice (the past-quota flows start their own, tests/system/pastQuota.test.ts).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { startSystem, type System } from '../browser/support/startSystem.js'
import { base64, callTool, mcpAgent, storeFilePayment, structured, untilVerified } from '../mcp/mcpAgent.js'
import { multipart, type PayableChain } from '../storage/harness.js'
import { devnetChain, usdcBalance } from './devnetChain.js'

/** A devnet payer (Anvil account 4) no other file of the shared system pays from. */
const PAYER = 4
const payer = anvilAccount(PAYER).address

let system: System
let base: PayableChain

beforeAll(async () => {
  system = await startSystem()
  base = devnetChain(system.devnet, 'eip155:8453')
})

afterAll(async () => system?.close())

describe('an agent pays for and stores a file through /mcp on npm start', () => {
  it('lists the tools, pays the x402 requirement through _meta, and the upload ends verified; the payment is refused again through MCP and POST /store', async () => {
    const client = await mcpAgent(system.url)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(['chat', 'get_receipt', 'list_models', 'quote_storage', 'store_file', 'verify_upload'])

    const data = randomBytes(4096)
    const { required, payload, header, price } = await storeFilePayment(client, base, PAYER, data)
    expect(required.accepts.map((a) => a.network)).toEqual(['eip155:8453', 'eip155:1', expect.stringMatching(/^algorand:/)])
    expect(required.accepts[0]!.payTo.toLowerCase()).toBe(system.devnet.service.payToEvm.toLowerCase())
    const [payerBefore, serviceBefore] = [await usdcBalance(base, payer), await usdcBalance(base, system.devnet.service.payToEvm)]

    const paid = await callTool(client, 'store_file', { data_base64: base64(data), mime_type: 'application/octet-stream' }, payload)
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    const result = structured(paid) as { arTxId: string; upload_id: string; status: string; sizeBytes: number }
    expect(result).toMatchObject({ status: 'stored', sizeBytes: 4096 })
    const settlement = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string; network: string; payer: string }
    expect(settlement).toMatchObject({ success: true, network: 'eip155:8453', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect(settlement.payer.toLowerCase()).toBe(payer.toLowerCase())
    expect(payerBefore - (await usdcBalance(base, payer))).toBe(price)
    expect((await usdcBalance(base, system.devnet.service.payToEvm)) - serviceBefore).toBe(price)

    expect(await untilVerified(client, result.upload_id, 90_000)).toBe('verified')
    const receipt = await callTool(client, 'get_receipt', { ar_tx_id: result.arTxId })
    expect(receipt.isError, JSON.stringify(receipt)).toBeFalsy()
    expect(structured(receipt).ar_tx_id).toBe(result.arTxId)

    // The same payment again: through MCP (another file and the same one), then as the X-PAYMENT of POST /store.
    const replay = await callTool(client, 'store_file', { data_base64: base64(randomBytes(4096)) }, payload)
    expect(replay.isError).toBe(true)
    expect(structured(replay).error).toBe('payment_replayed')
    expect(structured(await callTool(client, 'store_file', { data_base64: base64(data) }, payload)).error).toBe('payment_replayed')
    const viaHttp = await fetch(`${system.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    expect(viaHttp.status).toBe(409)
    expect(((await viaHttp.json()) as { error: string }).error).toBe('payment_replayed')
    expect(payerBefore - (await usdcBalance(base, payer))).toBe(price)
    await client.close()
  }, 150_000)
})
