/**
 * Driver `mcp-payment`: machine `mcp-payment` (machines/mcp/mcpPayment.yaml), paid MCP tool calls per x402's MCP
 * transport on `POST /mcp`, one JSON-RPC message per request through the DocumentClient (so every answer is
 * checked against the document too). Paying is the target's `chain` hook: its payer's `PAYMENT-SIGNATURE`
 * value, decoded, is the `PaymentPayload` sent in `_meta["x402/payment"]`.
 */
import type { Reply } from '../DocumentClient.js'
import type { Driver } from '../runner.js'
import type { Payer, Requirement, Row } from '../types.js'
import { expectProblems } from './http.js'

type McpRow = Row & {
  tool?: string
  perNetwork?: boolean
  file?: { size: number }
  payment?: 'none' | 'valid' | 'replay' | 'underpaid'
  via?: 'mcp' | 'http'
  continues?: string
  observe?: 'response' | 'upload'
  eventually_ms?: number
  expect?: Row['expect'] & { tools?: string[]; x402Error?: boolean; accepts?: string[] }
}

const matches = (pattern: string, network: string) => (pattern.endsWith('*') ? network.startsWith(pattern.slice(0, -1)) : network === pattern)
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

export const mcpPaymentDriver: Driver = ({ machine, target, client, random }) => {
  const networks = machine.networks ?? []
  const payerFor = (pattern: string): Payer | undefined => {
    const payers = target.hooks.chain?.payers ?? {}
    return Object.hasOwn(payers, pattern) ? payers[pattern] : undefined
  }
  let id = 0
  const lastValid = new Map<string, { data: Uint8Array; payload: unknown; header: string }>()
  const uploadOf = new Map<string, string>()
  const ran = new Set<string>()

  const rpc = (method: string, params: Record<string, unknown>) => client.call('gateway', 'POST', '/mcp', { json: { jsonrpc: '2.0', id: ++id, method, params }, headers: MCP_HEADERS })
  /** The JSON-RPC `result` as the row's body (the HTTP status kept). */
  const resultOf = (reply: Reply): Reply => ({ ...reply, body: reply.body?.result ?? reply.body })
  const storeFile = (data: Uint8Array, payment: unknown) =>
    rpc('tools/call', { name: 'store_file', arguments: { data_base64: Buffer.from(data).toString('base64') }, ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }) })
  const requirementFor = async (data: Uint8Array, network: string): Promise<Requirement> => {
    const quote = resultOf(await storeFile(data, undefined))
    const req = ((quote.body?.structuredContent?.accepts ?? []) as Requirement[]).find((a) => matches(network, a.network))
    if (!req) throw new Error(`no requirement for ${network}: ${quote.text.slice(0, 200)}`)
    return req
  }
  const pay = async (network: string, req: Requirement, data: Uint8Array) => {
    const header = await payerFor(network)!(req, data)
    return { header, payload: JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as unknown }
  }

  return {
    variants: (row) => ((row as McpRow).perNetwork ? networks : [undefined]),
    missing(original, network) {
      const row = original as McpRow
      if (network && row.payment && row.payment !== 'none' && !payerFor(network)) return `the chain hook has no payer for ${network}`
      if (row.continues && !ran.has(`${row.continues}|${network}`)) return `continues ${row.continues}, which did not run on this target`
      return undefined
    },
    async run(original, network, problems) {
      const row = original as McpRow
      ran.add(`${row.id}|${network}`)
      const expect = row.expect
      if (row.continues) {
        const uploadId = uploadOf.get(`${row.continues}|${network}`)
        if (!uploadId) throw new Error(`row ${row.continues} left no upload to follow`)
        const deadline = Date.now() + (row.eventually_ms ?? 0)
        let status = ''
        for (;;) {
          const reply = resultOf(await rpc('tools/call', { name: 'verify_upload', arguments: { upload_id: uploadId } }))
          status = String(reply.body?.structuredContent?.status)
          if (status === row.to || Date.now() > deadline) break
          await new Promise((r) => setTimeout(r, 250))
        }
        if (status !== row.to) problems.push(`upload ${uploadId} is ${status}, expected ${row.to}`)
        return
      }
      if (row.event === 'tools/list') {
        const reply = resultOf(await rpc('tools/list', {}))
        problems.push(...expectProblems(reply, { status: expect?.status }, {}))
        const names = ((reply.body?.tools ?? []) as { name: string }[]).map((t) => t.name).sort()
        if (expect?.tools && JSON.stringify(names) !== JSON.stringify([...expect.tools].sort())) problems.push(`tools ${JSON.stringify(names)}, expected ${JSON.stringify(expect.tools)}`)
        return
      }
      let data = random.bytes(row.file?.size ?? 16)
      let payment: unknown
      let header: string | undefined
      if (row.payment === 'valid') {
        ;({ payload: payment, header } = await pay(network!, await requirementFor(data, network!), data))
        lastValid.set(network!, { data, payload: payment, header })
      } else if (row.payment === 'underpaid') {
        const req = await requirementFor(data, network!)
        const less = String(BigInt(req.amount) - 1n)
        ;({ payload: payment } = await pay(network!, { ...req, amount: less, maxAmountRequired: less }, data))
      } else if (row.payment === 'replay') {
        const previous = lastValid.get(network!)
        if (!previous) throw new Error('no earlier valid payment to replay')
        ;({ data, payload: payment, header } = previous)
      }
      let reply: Reply
      if (row.via === 'http') {
        const form = new FormData()
        form.append('file', new Blob([data as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), 'conformance.bin')
        reply = await client.call('gateway', 'POST', '/store', { body: form, headers: header ? { 'PAYMENT-SIGNATURE': header } : {} })
      } else reply = resultOf(await storeFile(data, payment))
      problems.push(...expectProblems(reply, expect, {}))
      const result = reply.body as { structuredContent?: Record<string, unknown>; content?: { text?: string }[] } | undefined
      if (expect?.x402Error) {
        try {
          const wrapped = JSON.parse(result?.content?.[0]?.text ?? '') as { 'x402/error'?: { code?: number; data?: unknown } }
          if (wrapped['x402/error']?.code !== 402 || JSON.stringify(wrapped['x402/error'].data) !== JSON.stringify(result?.structuredContent)) problems.push('content[0].text is not the x402/error wrapper of structuredContent')
        } catch {
          problems.push('content[0].text is not JSON')
        }
      }
      if (expect?.accepts) {
        const got = ((result?.structuredContent?.accepts ?? []) as Requirement[]).map((a) => a.network)
        if (got.length !== expect.accepts.length || !expect.accepts.every((p, i) => got[i] !== undefined && matches(p, got[i]!))) problems.push(`accepts networks ${JSON.stringify(got)}, expected ${JSON.stringify(expect.accepts)}`)
      }
      const uploadId = result?.structuredContent?.upload_id
      if (typeof uploadId === 'string') uploadOf.set(`${row.id}|${network}`, uploadId)
    },
  }
}
