import { mkdtempSync, rmSync } from 'node:fs'
import { mcpRawPost } from '../support/mcpRawPost.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAppGateway } from './harness.js'

// The storage-only gateway of the harness: the shadow, batch and /llm plug-ins are not in its list.
const dir = mkdtempSync(join(tmpdir(), 'gw-left-out-'))
let gw: Awaited<ReturnType<typeof startAppGateway>>

beforeAll(async () => {
  gw = await startAppGateway({}, dir)
}, 60_000)
afterAll(async () => {
  await gw?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('a gateway built without some domains', () => {
  it('answers the shadow operations 503 overlord_not_configured, not a 500', async () => {
    const res = await fetch(`${gw.url}/admin/shadow/challenge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'release-key', params: { agent_id: 'a' } }),
    })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(503)
    expect(body.error).toBe('overlord_not_configured')
    expect(gw.validationErrors).toEqual([])
  })

  it('answers a receipt lookup 404 receipt_not_found while the receipt batch is not built', async () => {
    const res = await fetch(`${gw.url}/store/receipts/${'a'.repeat(43)}`)
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(404)
    expect(body.error).toBe('receipt_not_found')
    expect(gw.validationErrors).toEqual([])
  })

  it('still answers the domain it was built with from its own service (what its settings lack)', async () => {
    const res = await fetch(`${gw.url}/store/quote?bytes=1000`)
    const body = await res.json()
    expect(res.status).toBe(503)
    expect(body.details.missing).toContain('FACILITATOR_TOKEN')
    expect(gw.validationErrors).toEqual([])
  })

  it('lists on /mcp the tools of the domains it was built with only: no receipt, model or chat tool', async () => {
    const post = mcpRawPost(gw.url)
    const listed = (await (await post('tools/list')).json()) as { result: { tools: { name: string }[] } }
    expect(listed.result.tools.map((tool) => tool.name)).toEqual(['quote_storage', 'store_file', 'verify_upload'])
    // a left-out domain's tool is unknown, not a tool that fails
    const called = (await (await post('tools/call', { name: 'get_receipt', arguments: { ar_tx_id: 'a'.repeat(43) } })).json()) as { error?: { message: string } }
    expect(called.error?.message).toMatch(/Unknown tool: get_receipt/)
    expect(gw.validationErrors).toEqual([])
  })
})
