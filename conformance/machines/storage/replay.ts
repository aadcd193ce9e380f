/**
 * Replays machine 3.5 (paidStorage.yaml) against a live gateway by URL, on every network of the machine.
 * Paying is delegated to `payers` (one per network pattern: an x402 reference client for EVM, a signed
 * algosdk transfer for Algorand), and upstream failure to the devnet upstream's `/__devnet/fail` hook.
 * Returns one result per (row, network); the caller asserts or prints them.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const here = path.dirname(fileURLToPath(import.meta.url))

export type Requirement = { network: string; amount: string; maxAmountRequired: string; payTo: string; asset: string; resource: string; description: string; mimeType: string; extra: unknown; [k: string]: unknown }

/** Makes the payment header value (base64 payload) paying `requirement` for `file`. */
export type Payer = (requirement: Requirement, file: Uint8Array) => Promise<string>

type Expect = { status?: number; body?: Record<string, unknown>; headers?: string[]; accepts?: string[]; bodyKeys?: string[] }
type Row = {
  id: string
  'x-designed'?: boolean
  from: string
  event: string
  condition?: string
  perNetwork?: boolean
  file?: { size: number }
  payment?: 'none' | 'valid' | 'replay' | 'underpaid' | 'unsupported' | 'malformed'
  upstream?: 'up' | 'failing'
  continues?: string
  expect?: Expect
  to: string
  observe: 'response' | 'upload'
  eventually_ms?: number
}
export type PaidStorageMachine = { machine: string; seed: string; states: string[]; networks: string[]; rows: Row[] }
export type RowResult = { id: string; network: string | null; ok: boolean; problems: string[] }

export type ReplayOptions = {
  gatewayUrl: string
  /** Devnet upstream (for `upstream: failing`); rows needing it are reported as failed without it. */
  upstreamUrl?: string
  upstreamAdminToken?: string
  /** By network pattern of the machine (`eip155:8453`, `eip155:1`, `algorand:*`). */
  payers: Record<string, Payer>
  /** Only these row ids (default all). */
  rows?: string[]
  /** Only these networks (default all). */
  networks?: string[]
}

export function loadPaidStorageMachine(): PaidStorageMachine {
  return parse(readFileSync(path.join(here, 'paidStorage.yaml'), 'utf8')) as PaidStorageMachine
}

const matches = (pattern: string, network: string) => (pattern.endsWith('*') ? network.startsWith(pattern.slice(0, -1)) : network === pattern)

function form(data: Uint8Array): FormData {
  const f = new FormData()
  f.append('file', new Blob([data as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), 'conformance.bin')
  return f
}

type Reply = { status: number; headers: Headers; body: any }

async function post(base: string, data: Uint8Array, header?: string): Promise<Reply> {
  const r = await fetch(`${base}/store`, { method: 'POST', body: form(data), headers: header ? { 'PAYMENT-SIGNATURE': header } : {} })
  const text = await r.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: kept as text
  }
  return { status: r.status, headers: r.headers, body }
}

function subset(actual: unknown, expected: unknown, at: string, problems: string[]): void {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object') {
      problems.push(`${at}: expected an object, got ${JSON.stringify(actual)}`)
      return
    }
    for (const [k, v] of Object.entries(expected)) subset((actual as Record<string, unknown>)[k], v, `${at}.${k}`, problems)
  } else if (actual !== expected) problems.push(`${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
}

function checkExpect(reply: Reply, expect: Expect | undefined, problems: string[]): void {
  if (!expect) return
  if (expect.status !== undefined && reply.status !== expect.status) problems.push(`status ${reply.status}, expected ${expect.status}: ${JSON.stringify(reply.body).slice(0, 300)}`)
  if (expect.body) subset(reply.body, expect.body, 'body', problems)
  for (const h of expect.headers ?? []) if (!reply.headers.get(h)) problems.push(`missing header ${h}`)
  for (const k of expect.bodyKeys ?? []) if (!(reply.body && typeof reply.body === 'object' && k in reply.body)) problems.push(`body lacks ${k}`)
  if (expect.accepts) {
    const got = (reply.body?.accepts ?? []).map((a: Requirement) => a.network) as string[]
    if (got.length !== expect.accepts.length || !expect.accepts.every((p, i) => got[i] !== undefined && matches(p, got[i]!))) {
      problems.push(`accepts networks ${JSON.stringify(got)}, expected ${JSON.stringify(expect.accepts)}`)
    }
    for (const a of reply.body?.accepts ?? []) if (a.amount !== a.maxAmountRequired) problems.push(`${a.network}: amount ≠ maxAmountRequired`)
    const header = reply.headers.get('PAYMENT-REQUIRED')
    if (header && JSON.stringify(JSON.parse(Buffer.from(header, 'base64').toString('utf8'))) !== JSON.stringify(reply.body)) {
      problems.push('PAYMENT-REQUIRED is not base64 of the body')
    }
  }
}

const uploadState = (status: string) => (status === 'queued' || status === 'uploading' ? 'settled' : status === 'stored' || status === 'verified' || status === 'verify_failed' ? 'stored' : status)

export async function replayPaidStorage(opts: ReplayOptions): Promise<RowResult[]> {
  const machine = loadPaidStorageMachine()
  const base = opts.gatewayUrl.replace(/\/+$/, '')
  const results: RowResult[] = []
  const lastValid = new Map<string, { data: Uint8Array; header: string }>()
  const uploadOf = new Map<string, string>() // `${rowId}|${network}` → upload id
  const upstream = async (what: 'fail' | 'recover') => {
    if (!opts.upstreamUrl) throw new Error('upstreamUrl is required for upstream: failing')
    const r = await fetch(`${opts.upstreamUrl.replace(/\/+$/, '')}/__devnet/${what}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.upstreamAdminToken ? { authorization: `Bearer ${opts.upstreamAdminToken}` } : {}) },
      body: what === 'fail' ? JSON.stringify({ scope: 'uploads', status: 503 }) : '{}',
    })
    if (!r.ok) throw new Error(`upstream ${what} hook answered ${r.status}`)
  }

  for (const row of machine.rows) {
    if (opts.rows && !opts.rows.includes(row.id)) continue
    const networks = row.perNetwork ? machine.networks.filter((n) => !opts.networks || opts.networks.includes(n)) : [null]
    for (const pattern of networks) {
      const problems: string[] = []
      try {
        if (row.continues) {
          const uploadId = uploadOf.get(`${row.continues}|${pattern}`)
          if (!uploadId) throw new Error(`row ${row.continues} left no upload to follow`)
          const deadline = Date.now() + (row.eventually_ms ?? 0)
          let state = ''
          let last: any
          for (;;) {
            const r = await fetch(`${base}/store/uploads/${uploadId}`)
            last = await r.json()
            state = uploadState(last.status)
            if (state === row.to || Date.now() > deadline) break
            await new Promise((res) => setTimeout(res, 250))
          }
          if (state !== row.to) problems.push(`upload ${uploadId} is ${last?.status}, expected state ${row.to}`)
          if (last?.deposit?.status !== 'settled') problems.push('deposit not settled')
        } else {
          const data = new Uint8Array(randomBytes(row.file?.size ?? 16))
          let header: string | undefined
          const payment = row.payment ?? 'none'
          const requirementFor = async (d: Uint8Array) => {
            const quote = await post(base, d)
            if (quote.status !== 402) throw new Error(`quote answered ${quote.status}`)
            const req = (quote.body.accepts as Requirement[]).find((a) => pattern !== null && matches(pattern, a.network))
            if (!req) throw new Error(`no requirement for ${pattern}`)
            const payer = Object.entries(opts.payers).find(([p]) => p === pattern)?.[1]
            if (!payer) throw new Error(`no payer for ${pattern}`)
            return { req, payer }
          }
          let body: Uint8Array = data
          if (payment === 'valid') {
            const { req, payer } = await requirementFor(data)
            header = await payer(req, data)
            lastValid.set(pattern!, { data, header })
          } else if (payment === 'underpaid') {
            const { req, payer } = await requirementFor(data)
            const less = String(BigInt(req.amount) - 1n)
            header = await payer({ ...req, amount: less, maxAmountRequired: less }, data)
          } else if (payment === 'replay') {
            const prev = lastValid.get(pattern!)
            if (!prev) throw new Error('no earlier valid payment to replay')
            header = prev.header
            body = prev.data
          } else if (payment === 'unsupported') {
            header = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: 'eip155:137', accepted: { scheme: 'exact', network: 'eip155:137' }, payload: {} })).toString('base64')
          } else if (payment === 'malformed') {
            header = Buffer.from('not json').toString('base64')
          }
          if (row.upstream === 'failing') await upstream('fail')
          let reply: Reply
          try {
            reply = await post(base, body, header)
          } finally {
            if (row.upstream === 'failing') await upstream('recover')
          }
          checkExpect(reply, row.expect, problems)
          if (row.observe === 'upload') {
            const uploadId = reply.body?.details?.upload_id ?? reply.body?.queue_id
            if (typeof uploadId !== 'string') problems.push('the answer names no upload to observe')
            else {
              uploadOf.set(`${row.id}|${pattern}`, uploadId)
              const r = await fetch(`${base}/store/uploads/${uploadId}`)
              const state = await r.json()
              if (uploadState(state.status) !== row.to) problems.push(`upload is ${state.status}, expected state ${row.to}`)
              if (state.deposit?.status !== 'settled') problems.push(`deposit is ${state.deposit?.status}, expected settled`)
            }
          }
        }
      } catch (error) {
        problems.push(`error: ${(error as Error).message}`)
      }
      results.push({ id: row.id, network: pattern, ok: problems.length === 0, problems })
    }
  }
  return results
}

/**
 * The quote row (3.5-2) against a mock of the document (Prism): 402 chosen with `Prefer`, checked for the
 * three requirements in order and the PAYMENT-REQUIRED header.
 */
export async function replayQuoteOnMock(mockUrl: string): Promise<RowResult> {
  const machine = loadPaidStorageMachine()
  const row = machine.rows.find((r) => r.id === '3.5-2')!
  const problems: string[] = []
  const r = await fetch(`${mockUrl.replace(/\/+$/, '')}/store`, { method: 'POST', body: form(new Uint8Array(randomBytes(64))), headers: { Prefer: 'code=402, example=quote' } })
  const text = await r.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // kept as text
  }
  const expect = { ...row.expect }
  // the mock serves the document's example, whose error text is free
  if (expect.body) expect.body = { x402Version: 2 }
  checkExpect({ status: r.status, headers: r.headers, body }, expect, problems)
  return { id: row.id, network: null, ok: problems.length === 0, problems }
}
