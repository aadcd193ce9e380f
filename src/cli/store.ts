/**
 * `pay2store store <file>`: asks the price of its size (`GET /store/quote`, the 402 `POST /store` would answer;
 * from a gateway without it, the unpaid upload's 402), pays the requirement of the chosen rail through that rail's
 * client side (src/x402/rails/clientRails.ts, picked by the requirement's network: a stock x402 client signs, or
 * the client pays on the rail's ledger itself and names its transaction; `--max-usd` caps what it pays), sends
 * the file with the payment, and prints the receipt and the Arweave link. The upload shows a bar.
 *
 * Once the paid request has started, a lost connection is not "cannot reach": the gateway may have taken the
 * payment and will finish the upload. The CLI sends the SAME payment again (same authorization or
 * transaction, carrying x402's `payment-identifier` when the 402 declares it): it cannot be charged twice, and
 * the gateway answers the first request's result. When no result comes within `--paid-retry` seconds it says
 * the payment may have been taken and how to check (exit 8), never to run the command again. So it is for a
 * gateway that goes silent (`--idle-timeout`: no byte either way for that long is a lost connection) and for a
 * payment made on its ledger before the upload (Algorand) whose gateway cannot be reached at all.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { type ClientPayer, clientRailFor } from '../x402/rails/clientRails.js'
import type { ClientPayInput, ClientPayment } from '../x402/rails/ClientRail.js'
import { CliError, EXIT, RequestLostError, UnreachableError, fileReadFailure, request } from './CliError.js'
import { answeredLine, errorBodyOf, wrongGatewayHint } from './errorBody.js'
import { getText } from './getText.js'
import { payerOf, toCliError } from './keys.js'
import type { Output } from './output.js'
import { formatAmount, unitOfRequirement } from './formatAmount.js'
import type { ArweaveChoice } from './devnetFile.js'
import { foreignGatewayWarning } from './foreignGateway.js'
import { postFile } from './postFile.js'
import type { SendFileResult } from './sendFile.js'
import { createBars } from './progress.js'
import { onRail, RAILS } from './rails.js'

/** The command's options but `--arweave`; each rail's client side reads its own key options among them. */
type StoreSettings = {
  gateway: string
  rail: string
  devnet?: string | boolean
  tagApp?: string
  maxUsd?: string
  /** Seconds to keep sending the same payment again after its connection was lost (default 120). */
  paidRetry?: string
  /** Seconds without a byte either way after which a request to the gateway is given up (default 180; 0: never). */
  idleTimeout?: string
}

/** The command's flags as given (`--arweave` a URL). */
export type StoreFlags = Record<string, unknown> & StoreSettings & { arweave: string }
/** The flags, `arweave` resolved: the link's Arweave gateway and the devnet it was taken from (main.ts: arweaveChoice). */
export type StoreOptions = Record<string, unknown> & StoreSettings & { arweave: ArweaveChoice }

/** x402's `payment-identifier` extension (@x402/extensions names it; its module loads a JSON-schema validator the CLI does not need). */
const PAYMENT_IDENTIFIER = 'payment-identifier'
const DEFAULT_PAID_RETRY_S = 120
/**
 * Longer than the gateway's longest silent step of a paid upload (its upstream upload call, 120 s by default):
 * an answer that is merely slow is not given up.
 */
const DEFAULT_IDLE_TIMEOUT_S = 180

export type StoreResult = {
  arTxId: string
  sha256: string
  sizeBytes: number
  network: string
  amountAtomic: string
  asset: string
  payer: string
  arweaveUrl: string
  /** Why `arweaveUrl` may not hold the bytes: a `--devnet` whose gateway is not the one paid (foreignGateway.ts). */
  warning?: string
  receipt: Record<string, unknown>
}

function parseJson(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return { message: text.slice(0, 300) }
  }
}

function failure(status: number, body: Record<string, unknown>, what: string): CliError {
  const said = errorBodyOf(body)
  const code = said.code ?? `http_${status}`
  const message = `${answeredLine(what, status, said)}${wrongGatewayHint(status, said.code)}`
  // the gateway's own pre-check ("the payer's balance … does not cover …") or the facilitator's and chain's words
  if (status === 402 && /insufficient_balance|insufficient funds|exceeds balance|balance \(\d+\) does not cover/i.test(message)) return new CliError('insufficient_funds', `the payer's balance does not cover the price (${message})`, EXIT.insufficientFunds)
  if (status === 402) return new CliError(code, message, EXIT.notPayable)
  if (status === 400 || status === 413 || status === 415) return new CliError(code, message, EXIT.usage)
  return new CliError(code, message, EXIT.server)
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** The rail's payment for the quote; its failures as the CLI's errors. */
async function pay(payer: ClientPayer, input: ClientPayInput): Promise<ClientPayment> {
  try {
    return await payer.pay(input)
  } catch (error) {
    throw toCliError(error)
  }
}

/** An option in seconds as milliseconds (`fallback` seconds when unset). */
function secondsMs(flag: string, option: string | undefined, fallback: number): number {
  if (option === undefined) return fallback * 1000
  const seconds = Number(option)
  if (option.trim() === '' || !Number.isFinite(seconds) || seconds < 0) throw new CliError('bad_option', `${flag} takes a number of seconds, not ${option}`, EXIT.usage)
  return seconds * 1000
}

/** Waits 1, 2, 4… (at most 10) seconds before try `attempt + 1`, never past `deadline`. */
const backOff = (attempt: number, deadline: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** Math.min(attempt, 4), 10_000, Math.max(0, deadline - Date.now()))))

/**
 * The paid request's outcome unknown: the payment was sent and may have been taken. Says so, that the gateway
 * finishes a paid upload, and how to find it — never "is the gateway running?", which invites paying again.
 */
function paymentUnknown(why: string, payment: Record<string, unknown> | undefined, taken = false): CliError {
  const txId = typeof payment?.txId === 'string' ? payment.txId : undefined
  const check = txId
    ? `its payment is Algorand transaction ${txId}: the gateway's operator finds the payment, and the upload if the gateway received it, by it`
    : "check this wallet's uploads with `npx pay2store uploads` (with the same --gateway and key options, e.g. --devnet)"
  return new CliError(
    'payment_outcome_unknown',
    `${why}; the payment ${taken ? 'was' : 'may already have been'} taken — do not store the file again (that would pay again): the gateway keeps a paid upload and finishes it; ${check}`,
    EXIT.paymentUnknown,
  )
}

/**
 * Sends the paid request; after a lost connection sends it again — the same payment, which cannot be charged
 * twice — until an answer or `deadline`, waiting 1, 2, 4… (at most 10) seconds between tries. A 409 to a
 * resend is the gateway holding the payment: "retry shortly" while the first request is still being settled,
 * else no result to give (exit 8). Returns the stored upload (200) or the queued one (202).
 */
async function sendPaid(o: {
  send: (attempt: number) => Promise<SendFileResult>
  deadline: number
  say: (text: string) => void
  unknown: (why: string) => CliError
  /** The money moved on its ledger before the request (Algorand): a gateway not reached at all leaves it paid. */
  moved: boolean
}): Promise<Record<string, unknown>> {
  // what went wrong first once the payment had left: `made` when it was a gateway not reached after a moved payment
  let lost: { url: string; reason: string; made: boolean } | undefined
  let lastUnreached = false
  const lostLine = (l: NonNullable<typeof lost>) =>
    l.made ? `the payment was made, but ${l.url} could not be reached (${l.reason})` : `the connection to ${l.url} was lost after the payment was sent (${l.reason})`
  for (let attempt = 0; ; attempt++) {
    let answer: SendFileResult
    try {
      answer = await o.send(attempt)
    } catch (error) {
      // a resend that cannot reach the gateway at all: the first may still have been taken; and a payment already
      // made on its ledger is paid whether or not the gateway was reached — never "is the gateway running?"
      const unreached = error instanceof UnreachableError
      if (!(error instanceof RequestLostError) && !(unreached && (lost || o.moved))) throw error
      lastUnreached = unreached
      if (!lost) {
        lost = { url: error.url, reason: error.reason, made: unreached }
        o.say(`${lostLine(lost)}; sending the same payment again — it cannot be charged twice`)
      }
      if (Date.now() >= o.deadline) {
        const since = !lastUnreached ? 'and sending the same payment again got no answer' : lost.made ? 'nor since, when the same payment was sent again' : 'and the gateway could not be reached since'
        throw o.unknown(`${lostLine(lost)} ${since}`)
      }
      await backOff(attempt, o.deadline)
      continue
    }
    const body = parseJson(answer.body)
    if (answer.status === 200 || answer.status === 202) return body
    if (lost && answer.status === 409) {
      const message = typeof body.message === 'string' ? body.message : String(body.error)
      if (/retry/i.test(message) && Date.now() < o.deadline) {
        await backOff(attempt, o.deadline)
        continue
      }
      throw o.unknown(`${lostLine(lost)}; sent again, the gateway answered that it holds this payment (409: ${message}) but gave no result`)
    }
    throw failure(answer.status, body, 'POST /store (paid)')
  }
}

/** A paid upload the gateway queued (202): its state (`GET /store/uploads/{id}`, public) until it is stored or `deadline`. */
async function awaitQueued(gateway: string, uploadId: string, deadline: number, unknown: (why: string, taken: boolean) => CliError): Promise<Record<string, unknown>> {
  const url = `${gateway.replace(/\/$/, '')}/store/uploads/${encodeURIComponent(uploadId)}`
  for (let attempt = 0; ; attempt++) {
    const res = await request(url, undefined, 'gateway').catch(() => undefined)
    const state = res?.status === 200 ? ((await res.json().catch(() => ({}))) as { result?: Record<string, unknown> | null }) : undefined
    if (state?.result) return state.result
    if (Date.now() >= deadline) throw unknown(`the gateway took the payment and queued the upload as ${uploadId}, which is not stored yet (its state: ${url})`, true)
    await backOff(attempt, deadline)
  }
}

/**
 * The requirements for a file of `size` bytes: `GET /store/quote?bytes=` (the 402 `POST /store` would answer, before
 * a byte is sent — so `--max-usd` refuses a price before a 2 GB file is uploaded for nothing), or, from a gateway
 * without it (404), the unpaid `POST /store` of the whole file.
 */
async function quoteFor(
  url: string,
  file: string,
  size: number,
  tag: Record<string, string>,
  bars: ReturnType<typeof createBars>,
  idleMs: number,
): Promise<SendFileResult & { expected: number; what: string }> {
  const quote = await getText(`${url}/quote?bytes=${size}`, url, 'gateway', idleMs)
  if (quote.status !== 404) return { ...quote, expected: 200, what: 'GET /store/quote' }
  const posted = await postFile({ url, path: file, size, headers: tag, service: 'gateway', idleMs, onProgress: (sent, total) => bars.update('quote', 'quote (upload)', sent, total) })
  return { ...posted, expected: 402, what: 'POST /store' }
}

export async function store(file: string, options: StoreOptions, out: Output): Promise<StoreResult> {
  const network = RAILS.get(options.rail)
  if (network === undefined) throw new CliError('bad_rail', `unknown rail ${options.rail}; choose ${[...RAILS.keys()].join(' or ')}`, EXIT.usage)
  let size: number
  try {
    const s = await stat(file)
    if (!s.isFile()) throw new Error('not a regular file')
    size = s.size
  } catch (error) {
    throw new CliError('bad_file', `cannot read ${file}: ${fileReadFailure(error)}`, EXIT.usage)
  }
  if (size === 0) throw new CliError('bad_file', `${file} is empty; there is nothing to store`, EXIT.usage)
  // keys before any upload: no key, no point sending the file
  const rail = clientRailFor(network)
  if (!rail) throw new CliError('bad_rail', `no client pays on ${options.rail} (${network})`, EXIT.usage)
  const payer = await payerOf(rail, options)
  const url = `${options.gateway.replace(/\/$/, '')}/store`
  // options before anything is sent (a bad value after the payment would leave it made for nothing)
  const retryMs = secondsMs('--paid-retry', options.paidRetry, DEFAULT_PAID_RETRY_S)
  const idleMs = secondsMs('--idle-timeout', options.idleTimeout, DEFAULT_IDLE_TIMEOUT_S)
  const tag: Record<string, string> = options.tagApp ? { 'X-SVC-Tag-App': options.tagApp } : {}
  const bars = createBars(!out.json)
  try {
    const quote = await quoteFor(url, file, size, tag, bars, idleMs)
    bars.done() // a quote's upload bar stays as drawn; what follows prints below it
    const say = (text: string) => {
      if (!bars.print(text)) out.line(text)
    }
    const quoteBody = parseJson(quote.body)
    if (quote.status !== quote.expected) throw failure(quote.status, quoteBody, quote.what)
    const http402 = new x402HTTPClient(new x402Client())
    const required = http402.getPaymentRequiredResponse((n) => (quote.headers[n.toLowerCase()] as string | undefined) ?? null, quoteBody)
    const offered = required.accepts.find((a) => onRail(options.rail, a.network))
    if (!offered) {
      throw new CliError('not_payable', `the gateway offers no payment on ${options.rail} (${network}…); it offers ${required.accepts.map((a) => a.network).join(', ')}`, EXIT.notPayable)
    }
    const paid = await pay(payer, {
      required: required as unknown as ClientPayInput['required'],
      offered: offered as unknown as ClientPayInput['offered'],
      railName: options.rail,
      describeAmount: (amount, asset) => formatAmount(amount, unitOfRequirement(offered.network, asset), asset),
      resourceUrl: url,
      file: { sha256Hex: () => sha256Of(file), sizeBytes: size },
      maxUsd: options.maxUsd,
      say,
    })
    const { payload, payer: paidBy } = paid
    const accepted = payload.accepted as { amount: string; asset: string; network: string }
    // x402 payment-identifier, when the gateway declares it: the same payment sent again gets the first result
    const declared = (required as { extensions?: Record<string, unknown> }).extensions?.[PAYMENT_IDENTIFIER] as { info?: Record<string, unknown> } | undefined
    if (declared) {
      const extensions = (payload.extensions ?? {}) as Record<string, unknown>
      payload.extensions = { ...extensions, [PAYMENT_IDENTIFIER]: { ...declared, info: { ...declared.info, id: `pay_${randomUUID().replace(/-/g, '')}` } } }
    }
    const paymentHeader = http402.encodePaymentSignatureHeader(payload as Parameters<typeof http402.encodePaymentSignatureHeader>[0])
    const unknown = (why: string, taken?: boolean) => paymentUnknown(why, payload.payload as Record<string, unknown> | undefined, taken)
    let body = await sendPaid({
      send: (attempt) =>
        postFile({
          url,
          path: file,
          size,
          headers: { ...tag, ...paymentHeader },
          service: 'gateway',
          idleMs,
          onProgress: (sent, total) => bars.update(attempt === 0 ? 'upload' : `upload-${attempt}`, attempt === 0 ? 'upload (paid)' : 'upload (same payment again)', sent, total),
        }),
      deadline: Date.now() + retryMs,
      moved: paid.moved === true,
      say: (text) => {
        bars.done()
        say(text)
      },
      unknown,
    })
    bars.done()
    if (body.arTxId === undefined && typeof body.queue_id === 'string') body = await awaitQueued(options.gateway, body.queue_id, Date.now() + retryMs, unknown)
    const arTxId = String(body.arTxId)
    const warning = foreignGatewayWarning(options.arweave, options.gateway, String(offered.payTo))
    return {
      arTxId,
      sha256: String(body.sha256),
      sizeBytes: Number(body.sizeBytes),
      network: accepted.network,
      amountAtomic: accepted.amount,
      asset: accepted.asset,
      payer: paidBy,
      arweaveUrl: `${options.arweave.url.replace(/\/$/, '')}/${arTxId}`,
      ...(warning ? { warning } : {}),
      receipt: body,
    }
  } finally {
    bars.close()
  }
}
