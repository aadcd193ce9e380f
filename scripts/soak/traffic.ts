/**
 * The soak's clients, through the load balancer: paid uploads on every rail (EVM Base, EVM mainnet,
 * Algorand), concurrent replays of one payment, wallet logins with a replayed signature, gated reads, cost
 * calls (a short /llm/completion by a signed-in wallet, answered by the soak's model server) and challenge floods. Every outcome is recorded for the reconciliation.
 */
import { createHash, randomBytes } from 'node:crypto'
import algosdk from 'algosdk'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import type { LocalChain } from '../../devnet/chains/startChain.js'
import { multipart, payingClient } from '../../tests/storage/harness.js'
import { type ClientPaymentRequired, clientRailFor } from '../../src/x402/rails/clientRails.js'

export type StoreRecord = { at: number; rail: string; bytes: number; status: number; replay?: boolean }
/** One cost call: when it was answered and its status (0: connection reset or timeout). */
export type CostRecord = { at: number; status: number }
export type Outcomes = {
  store: StoreRecord[]
  /** Per replayed payment: how many of its concurrent copies were answered 200. */
  replays: { okCount: number; statuses: number[] }[]
  logins: { wallet: string; token: string }[]
  loginFailures: number
  /** A register call replaying an already-used signed challenge that was accepted (must stay 0). */
  acceptedLoginReplays: number
  gatedReads: { ok: number; failed: number }
  costCalls: CostRecord[]
  /** Every flooded challenge's answer (0: none); `at`: when its flood was sent (ms), for the kill and rolling-restart windows. */
  challengeFlood: { at: number; status: number; error?: string }[]
}

export type TrafficOptions = {
  url: string
  base: LocalChain
  mainnet: LocalChain
  algodUrl: string
  algodToken: string
  algoPayerIndex: number
  /** Largest upload (the full run reaches 64 MB). */
  maxUploadBytes: number
  /** Concurrent upload clients. */
  uploaders: number
  stop: () => boolean
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function newOutcomes(): Outcomes {
  return { store: [], replays: [], logins: [], loginFailures: 0, acceptedLoginReplays: 0, gatedReads: { ok: 0, failed: 0 }, costCalls: [], challengeFlood: [] }
}

async function post(url: string, init: RequestInit): Promise<{ status: number; body: any; header: (name: string) => string | null; error?: string }> {
  try {
    const r = await fetch(url, { ...init, signal: AbortSignal.timeout(180_000) })
    const text = await r.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    return { status: r.status, body, header: (name) => r.headers.get(name) }
  } catch (e) {
    // connection reset (an instance was killed) or timeout; the cause says which, for the report
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    return { status: 0, body: undefined, header: () => null, error: cause?.code ?? cause?.message ?? String(e) }
  }
}

/** Mostly small, sometimes a few MB, now and then the largest. */
function pickSize(i: number, max: number): number {
  if (i % 25 === 24) return max
  if (i % 6 === 5) return Math.min(max, 1_048_576 + Math.floor(Math.random() * 3 * 1_048_576))
  return 1024 + Math.floor(Math.random() * 255 * 1024)
}

async function evmUpload(o: TrafficOptions, out: Outcomes, chain: LocalChain, payer: number, data: Buffer, rail: string): Promise<void> {
  const first = await post(`${o.url}/store`, { method: 'POST', body: multipart(data) })
  out.store.push({ at: Date.now(), rail: `${rail} (quote)`, bytes: data.length, status: first.status })
  if (first.status !== 402) return
  const client = payingClient(chain, payer)
  const required = client.getPaymentRequiredResponse(first.header, first.body)
  const payload = await client.createPaymentPayload(required)
  const paid = await post(`${o.url}/store`, { method: 'POST', body: multipart(data), headers: client.encodePaymentSignatureHeader(payload) })
  out.store.push({ at: Date.now(), rail, bytes: data.length, status: paid.status })
}

/**
 * An upload paid through a rail's own client side (src/x402/rails/clientRails.ts, as the CLI pays), on the
 * requirement that is on neither EVM chain of the soak: the rail picks itself by the network, so this lane
 * knows no chain family. Its payer is `algoPayerIndex` of the devnet's funded accounts, its node the soak's.
 */
async function railUpload(o: TrafficOptions, out: Outcomes, data: Buffer): Promise<void> {
  const first = await post(`${o.url}/store`, { method: 'POST', body: multipart(data) })
  out.store.push({ at: Date.now(), rail: 'third rail (quote)', bytes: data.length, status: first.status })
  if (first.status !== 402) return
  const required = first.body as ClientPaymentRequired
  const offered = required.accepts.find((a) => a.network !== o.base.network && a.network !== o.mainnet.network)
  const rail = offered && clientRailFor(offered.network)
  if (!offered || !rail) throw new Error(`no third rail offered: ${required.accepts.map((a) => a.network).join(', ')}`)
  const env = { SOAK_PAYER_MNEMONIC: algosdk.secretKeyToMnemonic(algoTestAccount(o.algoPayerIndex).sk), SOAK_NODE_TOKEN: o.algodToken }
  const payer = await rail.payer({ options: { algod: o.algodUrl, algorandKeyEnv: 'SOAK_PAYER_MNEMONIC', algodTokenEnv: 'SOAK_NODE_TOKEN' }, devnet: undefined, env })
  const sha = createHash('sha256').update(data).digest('hex')
  const { payload } = await payer.pay({
    required,
    offered,
    railName: offered.network,
    describeAmount: (amount, asset) => `${amount} of ${asset}`,
    resourceUrl: `${o.url}/store`,
    file: { sha256Hex: async () => sha, sizeBytes: data.length },
    say: () => undefined,
  })
  const header = Buffer.from(JSON.stringify(payload)).toString('base64')
  const paid = await post(`${o.url}/store`, { method: 'POST', body: multipart(data), headers: { 'PAYMENT-SIGNATURE': header } })
  out.store.push({ at: Date.now(), rail: offered.network, bytes: data.length, status: paid.status })
}

export async function uploader(o: TrafficOptions, out: Outcomes, worker: number): Promise<void> {
  for (let i = 0; !o.stop(); i++) {
    const data = randomBytes(pickSize(i * o.uploaders + worker, o.maxUploadBytes))
    const rail = (i + worker) % 3
    try {
      if (rail === 0) await evmUpload(o, out, o.base, 2 + (worker % 2), data, 'eip155:8453')
      else if (rail === 1) await evmUpload(o, out, o.mainnet, 4 + (worker % 2), data, 'eip155:1')
      else if (worker === 0) await railUpload(o, out, data) // one sender on the third rail: its transactions stay in order
      else await evmUpload(o, out, o.base, 2 + (worker % 2), data, 'eip155:8453')
    } catch (error) {
      out.store.push({ at: Date.now(), rail: `client error: ${String(error).slice(0, 80)}`, bytes: data.length, status: -1 })
    }
  }
}

/** One payment sent five times at once: at most one may be served. */
export async function replayer(o: TrafficOptions, out: Outcomes): Promise<void> {
  while (!o.stop()) {
    await sleep(3_000)
    await replayOnce(o, out).catch(() => undefined)
  }
}

async function replayOnce(o: TrafficOptions, out: Outcomes): Promise<void> {
  {
    const data = randomBytes(2048)
    const first = await post(`${o.url}/store`, { method: 'POST', body: multipart(data) })
    if (first.status !== 402) return
    const client = payingClient(o.base, 5)
    const payload = await client.createPaymentPayload(client.getPaymentRequiredResponse(first.header, first.body))
    const headers = client.encodePaymentSignatureHeader(payload)
    const replies = await Promise.all(Array.from({ length: 5 }, () => post(`${o.url}/store`, { method: 'POST', body: multipart(data), headers })))
    for (const r of replies) out.store.push({ at: Date.now(), rail: 'replay', bytes: data.length, status: r.status, replay: true })
    out.replays.push({ okCount: replies.filter((r) => r.status === 200).length, statuses: replies.map((r) => r.status) })
  }
}

export async function loginClient(o: TrafficOptions, out: Outcomes): Promise<void> {
  while (!o.stop()) {
    await sleep(500)
    await loginOnce(o, out).catch(() => out.loginFailures++)
  }
}

async function loginOnce(o: TrafficOptions, out: Outcomes): Promise<void> {
  const json = { 'content-type': 'application/json' }
  {
    const account = privateKeyToAccount(generatePrivateKey())
    const challenge = await post(`${o.url}/users/challenge`, { method: 'POST', headers: json, body: JSON.stringify({ wallet: account.address }) })
    if (challenge.status !== 200) {
      out.loginFailures++
      return
    }
    const signature = await account.signMessage({ message: challenge.body.challenge })
    const body = JSON.stringify({ wallet: account.address, challenge: challenge.body.challenge, signature })
    const session = await post(`${o.url}/users/register-with-signature`, { method: 'POST', headers: json, body })
    if (session.status !== 200) {
      out.loginFailures++
      return
    }
    out.logins.push({ wallet: account.address, token: session.body.session_token })
    // the same signed challenge again, through whichever instance: never a second session
    const replay = await post(`${o.url}/users/register-with-signature`, { method: 'POST', headers: json, body })
    if (replay.status === 200) out.acceptedLoginReplays++
    // a gated read with the session, on whichever instance the balancer picks
    const read = await post(`${o.url}/users/session/validate`, { method: 'GET', headers: { 'x-session-token': session.body.session_token } })
    if (read.status === 200) out.gatedReads.ok++
    else out.gatedReads.failed++
  }
}

/**
 * Cost calls, one at a time (the model server shares two cores with everything else): a signed-in wallet of
 * the login client asks for a four-token completion, on whichever instance the balancer picks. 402 (the
 * wallet's daily quota used up) is an answer the soak expects, not an error.
 */
export async function costCaller(o: TrafficOptions, out: Outcomes): Promise<void> {
  for (let i = 0; !o.stop(); i++) {
    await sleep(1_000)
    const login = out.logins.at(-1 - (i % 3))
    if (!login) continue
    const r = await post(`${o.url}/llm/completion`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-token': login.token },
      body: JSON.stringify({ prompt: 'Hi', stream: false, options: { num_predict: 4, seed: i } }),
    })
    out.costCalls.push({ at: Date.now(), status: r.status })
  }
}

export async function challengeFlooder(o: TrafficOptions, out: Outcomes): Promise<void> {
  while (!o.stop()) {
    await sleep(5_000)
    const wallet = privateKeyToAccount(generatePrivateKey()).address
    const at = Date.now()
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => post(`${o.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet }) })),
    )
    for (const r of replies) {
      // what failed, for the report: the connection's error, or a 5xx's error code (HAProxy's own 5xx is HTML)
      const error = r.error ?? (r.status >= 500 ? (typeof r.body?.error === 'string' ? r.body.error : String(r.body).slice(0, 80)) : undefined)
      out.challengeFlood.push({ at, status: r.status, ...(error ? { error } : {}) })
    }
  }
}
