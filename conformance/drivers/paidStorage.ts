/**
 * Driver `paid-storage`: machine 3.5 (paidStorage.yaml), `POST /store` as multipart, once per network of the
 * machine for `perNetwork` rows. Paying is the target's `chain` hook (a payer per network pattern: an x402
 * reference client for EVM, a signed algosdk transfer for Algorand); upstream failure is its `faults` hook
 * (`upstream`). Row fields: `file.size`, `payment` (none | valid | replay | underpaid | unsupported |
 * malformed), `upstream` (up | failing), `continues` (follow an earlier row's upload), `observe` (response |
 * upload), `eventually_ms`.
 */
import type { Reply } from '../DocumentClient.js'
import type { Driver } from '../runner.js'
import type { Payer, Requirement, Row } from '../types.js'
import { expectProblems } from './http.js'

type StorageRow = Row & {
  perNetwork?: boolean
  file?: { size: number }
  payment?: 'none' | 'valid' | 'replay' | 'underpaid' | 'unsupported' | 'malformed'
  upstream?: 'up' | 'failing'
  continues?: string
  observe: 'response' | 'upload'
  eventually_ms?: number
}

const matches = (pattern: string, network: string) => (pattern.endsWith('*') ? network.startsWith(pattern.slice(0, -1)) : network === pattern)
const paying = (row: StorageRow) => row.payment === 'valid' || row.payment === 'underpaid'
const uploadState = (status: string) => (status === 'queued' || status === 'uploading' ? 'settled' : status === 'stored' || status === 'verified' || status === 'verify_failed' ? 'stored' : status)

function form(data: Uint8Array): FormData {
  const f = new FormData()
  f.append('file', new Blob([data as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), 'conformance.bin')
  return f
}

function acceptsProblems(reply: Reply, accepts: string[] | undefined): string[] {
  if (!accepts || reply.status !== 402) return []
  const problems: string[] = []
  const offered = Array.isArray(reply.body?.accepts) ? (reply.body.accepts as Requirement[]) : []
  const got = offered.map((a) => a.network)
  if (got.length !== accepts.length || !accepts.every((p, i) => got[i] !== undefined && matches(p, got[i]!))) problems.push(`accepts networks ${JSON.stringify(got)}, expected ${JSON.stringify(accepts)}`)
  for (const a of offered) if (a.amount !== a.maxAmountRequired) problems.push(`${a.network}: amount ≠ maxAmountRequired`)
  const header = reply.headers.get('PAYMENT-REQUIRED')
  if (header && JSON.stringify(JSON.parse(Buffer.from(header, 'base64').toString('utf8'))) !== JSON.stringify(reply.body)) problems.push('PAYMENT-REQUIRED is not base64 of the body')
  return problems
}

export const paidStorageDriver: Driver = ({ machine, target, client, random }) => {
  const networks = machine.networks ?? []
  const payerFor = (pattern: string): Payer | undefined => {
    const payers = target.hooks.chain?.payers ?? {}
    return Object.hasOwn(payers, pattern) ? payers[pattern] : undefined
  }
  const lastValid = new Map<string, { data: Uint8Array; header: string }>()
  const uploadOf = new Map<string, string>() // `${rowId}|${network}` → upload id
  const ran = new Set<string>()
  const store = (data: Uint8Array, headers: Record<string, string>) => client.call('gateway', 'POST', '/store', { body: form(data), headers })
  const upload = (id: string) => client.call('gateway', 'GET', `/store/uploads/${encodeURIComponent(id)}`)

  return {
    variants: (row) => ((row as StorageRow).perNetwork ? networks : [undefined]),
    missing(original, network) {
      const row = original as StorageRow
      if (network && (paying(row) || row.payment === 'replay') && !payerFor(network)) return `the chain hook has no payer for ${network}`
      if (row.upstream === 'failing' && !target.hooks.faults?.upstream) return 'target lacks hook: faults (storage upstream)'
      if (row.continues && !ran.has(`${row.continues}|${network}`)) return `continues ${row.continues}, which did not run on this target`
      return undefined
    },
    async run(original, network, problems) {
      const row = original as StorageRow
      ran.add(`${row.id}|${network}`)
      if (row.continues) {
        const uploadId = uploadOf.get(`${row.continues}|${network}`)
        if (!uploadId) throw new Error(`row ${row.continues} left no upload to follow`)
        const deadline = Date.now() + (row.eventually_ms ?? 0)
        let last: Reply
        for (;;) {
          last = await upload(uploadId)
          if (uploadState(String(last.body?.status)) === row.to || Date.now() > deadline) break
          await new Promise((r) => setTimeout(r, 250))
        }
        if (uploadState(String(last.body?.status)) !== row.to) problems.push(`upload ${uploadId} is ${last.body?.status}, expected state ${row.to}`)
        if (last.body?.deposit?.status !== 'settled') problems.push('deposit not settled')
        return
      }
      const data = random.bytes(row.file?.size ?? 16)
      const mockHeaders = typeof row.mock === 'object' && target.mock ? (row.mock.headers ?? {}) : {}
      const requirementFor = async (d: Uint8Array) => {
        const quote = await store(d, {})
        if (quote.status !== 402) throw new Error(`quote answered ${quote.status}`)
        const req = (quote.body.accepts as Requirement[]).find((a) => network !== undefined && matches(network, a.network))
        if (!req) throw new Error(`no requirement for ${network}`)
        return req
      }
      let header: string | undefined
      let body = data
      if (row.payment === 'valid') {
        header = await payerFor(network!)!(await requirementFor(data), data)
        lastValid.set(network!, { data, header })
      } else if (row.payment === 'underpaid') {
        const req = await requirementFor(data)
        const less = String(BigInt(req.amount) - 1n)
        header = await payerFor(network!)!({ ...req, amount: less, maxAmountRequired: less }, data)
      } else if (row.payment === 'replay') {
        const previous = lastValid.get(network!)
        if (!previous) throw new Error('no earlier valid payment to replay')
        header = previous.header
        body = previous.data
      } else if (row.payment === 'unsupported') {
        header = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: 'eip155:137', accepted: { scheme: 'exact', network: 'eip155:137' }, payload: {} })).toString('base64')
      } else if (row.payment === 'malformed') {
        header = Buffer.from('not json').toString('base64')
      }
      if (row.upstream === 'failing') await target.hooks.faults!.upstream!('fail')
      let reply: Reply
      try {
        reply = await store(body, { ...mockHeaders, ...(header ? { 'PAYMENT-SIGNATURE': header } : {}) })
      } finally {
        if (row.upstream === 'failing') await target.hooks.faults!.upstream!('recover')
      }
      problems.push(...expectProblems(reply, row.expect, {}))
      if (reply.status === row.expect?.status) problems.push(...acceptsProblems(reply, row.expect?.accepts))
      if (row.observe === 'upload') {
        const uploadId = reply.body?.details?.upload_id ?? reply.body?.queue_id
        if (typeof uploadId !== 'string') problems.push('the answer names no upload to observe')
        else {
          uploadOf.set(`${row.id}|${network}`, uploadId)
          const state = await upload(uploadId)
          if (uploadState(String(state.body?.status)) !== row.to) problems.push(`upload is ${state.body?.status}, expected state ${row.to}`)
          if (state.body?.deposit?.status !== 'settled') problems.push(`deposit is ${state.body?.deposit?.status}, expected settled`)
        }
      }
    },
  }
}
