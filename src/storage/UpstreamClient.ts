import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Readable } from 'node:stream'
import { clientSpan } from '../shared/tracing/clientSpan.js'
import { StorageUpstreamFailedError } from './errors.js'

export type UpstreamRates = { winc: bigint; usd: string | number }
export type UpstreamUploadResult = { id: string; winc: string | null; body: Record<string, unknown> }

export type UpstreamClientOptions = {
  paymentUrl: string
  uploadUrl: string
  /** Longest read call (default 15 s). */
  timeoutMs?: number
  /** Longest upload, whole (default 120 s; a stalled socket also fails after `timeoutMs` idle). */
  uploadTimeoutMs?: number
  /** How long `/v1/rates` and the per-MiB price are reused (default 30 s). */
  rateCacheMs?: number
}

const UINT = /^\d+$/

function toBigInt(value: unknown, what: string): bigint {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof text !== 'string' || !UINT.test(text)) throw new StorageUpstreamFailedError(`upstream ${what} is not an integer`)
  return BigInt(text)
}

/** The Turbo-compatible payment and upload service of seed 4.7. */
export class UpstreamClient {
  readonly #paymentUrl: string
  readonly #uploadUrl: string
  readonly #timeoutMs: number
  readonly #uploadTimeoutMs: number
  readonly #rateCacheMs: number
  #cache: { at: number; rates: UpstreamRates; wincPerMiB: bigint } | undefined

  constructor({ paymentUrl, uploadUrl, timeoutMs = 15_000, uploadTimeoutMs = 120_000, rateCacheMs = 30_000 }: UpstreamClientOptions) {
    this.#uploadTimeoutMs = uploadTimeoutMs
    this.#paymentUrl = paymentUrl.replace(/\/+$/, '')
    this.#uploadUrl = uploadUrl.replace(/\/+$/, '')
    this.#timeoutMs = timeoutMs
    this.#rateCacheMs = rateCacheMs
  }

  async #getJson(url: string): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
    let response: Response
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(this.#timeoutMs) })
    } catch (cause) {
      throw new StorageUpstreamFailedError('storage upstream unreachable', { cause })
    }
    const text = await response.text()
    let body: Record<string, unknown> | undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, body }
  }

  async rates(): Promise<UpstreamRates> {
    const { status, body } = await this.#getJson(`${this.#paymentUrl}/v1/rates`)
    if (status !== 200 || !body) throw new StorageUpstreamFailedError(`upstream rates answered HTTP ${status}`)
    const fiat = body.fiat as Record<string, unknown> | undefined
    const usd = fiat?.usd
    if (typeof usd !== 'number' && typeof usd !== 'string') throw new StorageUpstreamFailedError('upstream rates carry no fiat.usd')
    return { winc: toBigInt(body.winc, 'rates.winc'), usd }
  }

  async priceOfBytes(n: bigint): Promise<bigint> {
    const { status, body } = await this.#getJson(`${this.#paymentUrl}/v1/price/bytes/${n}`)
    if (status !== 200 || !body) throw new StorageUpstreamFailedError(`upstream price answered HTTP ${status}`)
    return toBigInt(body.winc, 'price winc')
  }

  /** `{winc}`; 404 means zero. */
  async balance(address: string): Promise<bigint> {
    const { status, body } = await this.#getJson(`${this.#paymentUrl}/v1/balance/${encodeURIComponent(address)}`)
    if (status === 404) return 0n
    if (status !== 200 || !body) throw new StorageUpstreamFailedError(`upstream balance answered HTTP ${status}`)
    return toBigInt(body.winc, 'balance winc')
  }

  /** `GET {payment_url}/v1/info` (the Turbo upload service's info): the deposit address for top-ups, if any. */
  async depositAddress(): Promise<string | undefined> {
    const { status, body } = await this.#getJson(`${this.#uploadUrl}/v1/info`)
    if (status !== 200 || !body) throw new StorageUpstreamFailedError(`upstream info answered HTTP ${status}`)
    const ethereum = (body.addresses as Record<string, unknown> | undefined)?.ethereum
    return typeof ethereum === 'string' && /^0x[0-9a-fA-F]{40}$/.test(ethereum) ? ethereum : undefined
  }

  /**
   * `POST {payment_url}/v1/top-up/wallet/{address}/{currency}/{tx_hash}` (seed 4.7): credits a funding
   * transaction to `address`. Returns the credited winc (from the reply) — the upstream credits a transaction once.
   */
  async topUp(address: string, currency: string, txHash: string): Promise<{ creditedWinc: bigint | undefined }> {
    const url = `${this.#paymentUrl}/v1/top-up/wallet/${encodeURIComponent(address)}/${encodeURIComponent(currency)}/${encodeURIComponent(txHash)}`
    let response: Response
    try {
      response = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(this.#timeoutMs) })
    } catch (cause) {
      throw new StorageUpstreamFailedError('storage upstream unreachable', { cause })
    }
    const text = await response.text()
    if (response.status !== 200) throw new StorageUpstreamFailedError(`upstream top-up answered HTTP ${response.status}: ${text.slice(0, 200)}`)
    let credited: unknown
    try {
      credited = (JSON.parse(text) as { creditedTransaction?: { winstonCreditAmount?: unknown } }).creditedTransaction?.winstonCreditAmount
    } catch {
      credited = undefined
    }
    return { creditedWinc: typeof credited === 'string' && UINT.test(credited) ? BigInt(credited) : undefined }
  }

  /** Rates and the price of one MiB, cached briefly so a burst of quotes costs two upstream calls. */
  async pricing(): Promise<{ at: number; rates: UpstreamRates; wincPerMiB: bigint }> {
    const now = Date.now()
    if (this.#cache && now - this.#cache.at < this.#rateCacheMs) return this.#cache
    const [rates, wincPerMiB] = await Promise.all([this.rates(), this.priceOfBytes(1_048_576n)])
    this.#cache = { at: now, rates, wincPerMiB }
    return this.#cache
  }

  /** POST `{upload_url}/tx` with a signed data item streamed from `body` (exactly `length` bytes). */
  uploadDataItem(body: Readable, length: bigint): Promise<UpstreamUploadResult> {
    const url = new URL(`${this.#uploadUrl}/tx`)
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    // node:http, so not seen by the fetch instrumentation: the upload's span in the request's trace is made here
    const span = clientSpan('POST /tx', 'POST', url)
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => req.destroy(new Error(`upstream upload took longer than ${this.#uploadTimeoutMs} ms`)), this.#uploadTimeoutMs)
      const fail = (error: StorageUpstreamFailedError) => {
        clearTimeout(deadline)
        body.destroy()
        span.end(error)
        reject(error)
      }
      const req = send(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/octet-stream', 'content-length': length.toString(), ...span.headers },
          timeout: this.#timeoutMs,
        },
        (res) => {
          span.status(res.statusCode ?? 0)
          const chunks: Buffer[] = []
          let size = 0
          res.on('data', (c: Buffer) => {
            size += c.length
            if (size < 1_048_576) chunks.push(c)
          })
          res.on('error', (cause) => fail(new StorageUpstreamFailedError('upstream upload reply failed', { cause })))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            const status = res.statusCode ?? 0
            if (status === 402) {
              fail(new StorageUpstreamFailedError('upstream account has insufficient credits (402)'))
              return
            }
            if (status < 200 || status >= 300) {
              fail(new StorageUpstreamFailedError(`upstream upload answered HTTP ${status}: ${text.slice(0, 200)}`))
              return
            }
            let parsed: Record<string, unknown> = {}
            try {
              parsed = JSON.parse(text)
            } catch {
              // tolerated: the id is known from the signature
            }
            const winc = parsed.winc
            clearTimeout(deadline)
            span.end()
            resolve({
              id: typeof parsed.id === 'string' ? parsed.id : '',
              winc: typeof winc === 'string' || typeof winc === 'number' ? String(winc) : null,
              body: parsed,
            })
          })
        },
      )
      req.on('timeout', () => req.destroy(new Error('upstream upload timed out')))
      req.on('error', (cause) => fail(new StorageUpstreamFailedError('storage upstream unreachable', { cause })))
      body.on('error', (cause) => {
        req.destroy(cause)
      })
      body.pipe(req)
    })
  }
}
