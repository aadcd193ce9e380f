import { createHash } from 'node:crypto'
import { randomUUID } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { DataItemSigner } from './dataItem/ArweaveSigner.js'
import type { Logger } from 'pino'
import { BaseError } from '../shared/errors/BaseError.js'
import { withDeadline } from '../shared/withDeadline.js'
import type { EventSink } from '../catalogue/EventSink.js'
import {
  createRailRegistry,
  type DecodedPaymentHeader,
  decodePaymentHeader,
  encodeBase64Json,
  FacilitatorClient,
  FacilitatorPool,
  formatPriceUsd,
  HEADER_PAYMENT_RESPONSE,
  HEADER_X_PAYMENT_RESPONSE,
  LEAST_UPLOAD_PRICE_ATOMIC,
  PaymentClaims,
  type PaymentRequired,
  PaymentIdentifiers,
  paymentIdentifierOf,
  PaymentReplayedError,
  type PaymentRequirement,
  type Price,
  type RailRegistry,
  UnsupportedNetworkError,
  v1NetworkName,
} from '../x402/index.js'
import type { X402Config } from '../x402/config.js'
import type { StorageConfig } from './config.js'
import { InvalidTagError, PayloadTooLargeError, StorageNotConfiguredError, StorageUpstreamFailedError, UploadNotFoundError } from './errors.js'
import { PAYMENT_REFUSAL_CODES } from './paymentRefusals.js'
import { PriceHold, priceOf, type PricingSnapshot } from './PriceHold.js'
import type { X402DiscoveryDocument } from './discoveryDocument.js'
import { UpstreamCredit } from './UpstreamCredit.js'
import { newUploadId, UPLOAD_ID } from './ids.js'
import { type SettledDeposit, settleStorePayment } from './settleStorePayment.js'
import { StorePricing } from './StorePricing.js'
import type { DepositRow, Ledger, NewUpload, UploadRow } from './Ledger.js'
import { type IntakeRequest, type PaymentBelief, StoreIntake } from './intake/StoreIntake.js'
import { type BytesUpload, bytesUploadRequest } from './bytesUploadRequest.js'
import { FRAMING_ALLOWANCE, type MeasuredUpload, type ReceivedUpload } from './receiveUpload.js'
import { loadArweaveSigner, signDataItemFromFile, storageTags } from './signDataItem.js'
import type { OpenedSpool, Spool } from './Spool.js'
import { createSpool } from './spool/createSpool.js'
import { UploadSlots } from './UploadSlots.js'
import { UploadEvents } from './UploadEvents.js'
import type { VerifyOutcome } from './verifyStoredItem.js'
import { UpstreamClient } from './UpstreamClient.js'

type HeaderBag = Record<string, string | string[] | undefined>
/** Kept here for its callers; it lives with the rails now. */
export { createAlgodClient } from '../x402/rails/algorand/createAlgodClient.js'

export type StoreRequest = IntakeRequest

export type UploadResult = {
  arTxId: string
  sha256: string
  sizeBytes: number
  winc: string | null
  settlement: Record<string, unknown>
}

/** `Deposit` of the document: the logical deposit record of seed 2.7 (settled deposits only). */
export type DepositView = {
  payer: string
  pay_to: string
  network: string
  asset: string
  amount_atomic: string
  tx_hash: string
  scheme: string
  status: 'settled'
}

/** A paid upload's answer; a 402 is thrown (`PaymentRequiredError`) and rendered by the error catalogue. */
export type StoreOutcome =
  | { status: 200; body: UploadResult; headers: Record<string, string>; uploadId: string }
  | { status: 202; body: { queue_id: string; status: 'queued'; status_url: string; deposit: DepositView }; headers: Record<string, string> }

/** `StoreQuote` of the document (`GET /store/quote`): the 402 body for N bytes plus how long the price holds. */
export type StoreQuote = PaymentRequired & {
  quote: { size_bytes: number; amount: string; price_usd: string; valid_until: number; valid_for_s: number }
}

export type StoreOptions = {
  /** The x402 version to answer in when the request carries no payment (`?x402Version=1`); default 2. */
  version?: 1 | 2
  /** The client's address as the gateway sees it (proxy-aware); intake limits count per address (IPv6: /56). */
  clientAddress?: string
  /** The 402's `extensions` (default: `/store`'s Bazaar declaration; MCP declares its tool instead). */
  extensions?: Record<string, unknown>
}

/** `UploadStatus` of the document (`GET /store/uploads/{upload_id}`). */
export type UploadStatusView = {
  upload_id: string
  status: 'queued' | 'uploading' | 'stored' | 'verified' | 'verify_failed'
  ar_tx_id: string | null
  sha256: string
  size_bytes: number
  mime_type: string
  created_at: number
  updated_at: number
  /** When the upstream accepted the item; null until stored (`created_at` for rows stored before 0007). */
  stored_at: number | null
  deposit: DepositView
  result: UploadResult | null
  error: string | null
  /** Where the verifier attested the upload on chain (StorageAttest); null until it has. */
  attestation: { tx_hash: string; chain_id: number; contract: string } | null
}

export type StorageServiceOptions = {
  storage: StorageConfig
  x402: X402Config
  ledger: Ledger
  logger?: Logger
  /** Override the Arweave signer (tests); default: the JWK at `storage.arweaveJwkPath`. */
  signer?: DataItemSigner
  /** Where `storage.upstream.credit_low` / `storage.upstream.topped_up` go (the catalogue). */
  events?: EventSink
  /** Metrics hooks: every upstream balance read, every top-up, every facilitator failover. */
  onCreditBalance?: (winc: bigint) => void
  onTopUp?: () => void
  onFacilitatorFailover?: (info: { step: string; from: string; to: string }) => void
  /**
   * The instance this service runs in (`gateway_instances`): uploads it receives or takes are held in its
   * name. Default: a fresh id per process (never recognised after a restart).
   */
  instanceId?: string
  /** The payment rails (registered once at start); default: those of `x402`. */
  rails?: RailRegistry
}

const seconds = () => Math.floor(Date.now() / 1000)
const MAX_RETRY_MS = 5 * 60_000

/** `POST /store` (seed 4.6) and the upload queue, framework-free: the handler passes the raw request stream. */
export class StorageService {
  readonly upstream: UpstreamClient
  readonly facilitator: FacilitatorPool
  readonly credit: UpstreamCredit
  readonly priceHold: PriceHold
  readonly ledger: Ledger
  readonly config: StorageConfig
  readonly x402: X402Config
  readonly spool: Spool
  readonly uploadSlots: UploadSlots
  readonly intake: StoreIntake
  readonly instanceId: string
  readonly rails: RailRegistry
  /** The price of an upload, its requirements on every rail, the 402, the quote and discovery. */
  readonly pricing: StorePricing
  readonly identifiers: PaymentIdentifiers
  readonly #unverifiedSaid = new Map<string, number>()
  readonly #logger: Logger | undefined
  readonly #uploadEvents: UploadEvents
  #signer: Promise<DataItemSigner> | undefined

  constructor({ storage, x402, ledger, logger, signer, events, onCreditBalance, onTopUp, onFacilitatorFailover, instanceId, rails }: StorageServiceOptions) {
    this.config = storage
    this.x402 = x402
    this.ledger = ledger
    this.instanceId = instanceId ?? `process-${randomUUID()}`
    this.uploadSlots = new UploadSlots(storage.maxConcurrentUploads, storage.busyRetryAfterS, storage.intake.unverifiedUploads)
    this.intake = new StoreIntake({ limits: storage.intake, slots: this.uploadSlots, tmpDir: join(storage.spoolDir, 'tmp'), maxUploadBytes: storage.maxUploadBytes, retryAfterS: storage.busyRetryAfterS })
    this.spool = createSpool(ledger.db, storage)
    this.#logger = logger
    this.#uploadEvents = new UploadEvents({ ledger, events, logger })
    if (signer) this.#signer = Promise.resolve(signer)
    this.upstream = new UpstreamClient({ paymentUrl: storage.paymentUrl, uploadUrl: storage.uploadUrl, uploadTimeoutMs: storage.upstreamTimeoutMs, rateCacheMs: storage.rateCacheMs })
    this.facilitator = new FacilitatorPool({
      clients: [x402.facilitatorUrl, ...x402.fallbackFacilitatorUrls].map((url) => new FacilitatorClient({ url, token: x402.facilitatorToken })),
      onFailover: (info) => {
        logger?.warn({ step: info.step, from: info.from, to: info.to, err: String(info.error.cause ?? info.error) }, 'facilitator unreachable: trying the next')
        onFacilitatorFailover?.(info)
      },
    })
    this.priceHold = new PriceHold(storage.quoteValiditySeconds * 1000)
    this.credit = new UpstreamCredit({
      upstream: this.upstream,
      address: () => this.arweaveAddress(),
      lowWinc: storage.creditLowWinc,
      topUp: storage.topUp,
      events,
      logger,
      onBalance: onCreditBalance,
      onTopUp: () => onTopUp?.(),
    })
    this.rails = rails ?? createRailRegistry(x402)
    this.identifiers = new PaymentIdentifiers(ledger.db)
    this.pricing = new StorePricing({ storage, x402, rails: this.rails, upstream: this.upstream, priceHold: this.priceHold, credit: this.credit })
  }

  signer(): Promise<DataItemSigner> {
    this.#signer ??= loadArweaveSigner(this.config.arweaveJwkPath).catch((error) => {
      this.#signer = undefined
      throw error
    })
    return this.#signer
  }

  /** The service's upstream account: the Arweave address of its signer, base64url(sha256(owner)). */
  async arweaveAddress(): Promise<string> {
    const signer = await this.signer()
    return createHash('sha256').update(signer.publicKey).digest('base64url')
  }

  /**
   * An upload whose bytes are already in memory (the MCP tool `store_file`): presented to `store` as the
   * one-part multipart request `POST /store` receives, so it passes the same intake, payment checks, claim and
   * settlement (`bytesUploadRequest`). `path` gives the resource URL the requirements (and an Algorand note) bind.
   */
  storeBytes(upload: BytesUpload, path: string, options: StoreOptions = {}): Promise<StoreOutcome> {
    return this.store(bytesUploadRequest(upload), path, options)
  }

  get spoolTmpDir(): string {
    return join(this.config.spoolDir, 'tmp')
  }

  /**
   * Seed 4.6, steps 1–6, in order. `path` is the request path used for the resource URL. The intake
   * (`src/storage/intake/StoreIntake.ts`) comes first: until the payment header is decoded and its rail's
   * pre-check passed, nothing is written and no upload slot is taken; a request without payment is measured
   * (size, SHA-256) and answered 402.
   */
  async store(req: StoreRequest, path = '/store', options: StoreOptions = {}): Promise<StoreOutcome> {
    const admitted = await this.intake.admit(req, options.clientAddress, {
      ready: () => {
        const missing = this.missingSettings()
        if (missing.length > 0) throw new StorageNotConfiguredError(missing)
      },
      precheck: (decoded, clientKey) => this.#precheck(req.headers, decoded, path, clientKey),
      isRefusal: (error) => error instanceof BaseError && PAYMENT_REFUSAL_CODES.has(error.code),
      refusedUnread: (refusal, declaredBytes) => this.#refusedUnread(req.headers, path, options, refusal, declaredBytes),
    })
    if (!admitted.paid) return this.#storeReceived(req.headers, admitted.file, path, options, () => undefined, admitted.refusal)
    try {
      return await this.#store(req.headers, admitted.file, path, options)
    } finally {
      admitted.release()
    }
  }

  /**
   * The rail's pre-check of a payment header with what needs no body, before any slot or spool file: the
   * network is one of ours, the tag is valid, the payment was not used here already (409), and it is
   * believable — EVM: asset, payTo, validity window, at least the least any upload costs, the signer recovered
   * and the payer's nonce and funds read on chain (`EvmPayerCheck`); Algorand: the node knows the transaction,
   * to our address, in our asset, signed, able to confirm (bounded per client address). Its amount against the
   * size's price is checked once the size is known (`#storeReceived`). A payer the chain or node could not be
   * asked about is not verified: it gets a slot of the small pool only.
   */
  async #precheck(headers: HeaderBag, decoded: DecodedPaymentHeader, path: string, clientKey: string): Promise<PaymentBelief> {
    // the requirements' network, asset and payTo do not depend on the size: priced at the least an upload costs
    const least = LEAST_UPLOAD_PRICE_ATOMIC
    const offer = this.pricing.offer(path, 0n, 'application/octet-stream', { atomic: least, usd: formatPriceUsd(least), upstreamCostUsd: { n: 0n, d: 1n } })
    const chosen = (await this.pricing.accepts(offer)).find((a) => a.requirement.network === decoded.network)
    if (!chosen) throw new UnsupportedNetworkError(decoded.network)
    const tagHeader = headers['x-svc-tag-app']
    if (tagHeader !== undefined && !/^[\x20-\x7E]{1,128}$/.test(headerText(tagHeader))) throw new InvalidTagError()
    const network = chosen.requirement.network
    const paymentId = paymentIdentifierOf(decoded.payload)
    let belief: Awaited<ReturnType<typeof chosen.rail.precheck>>
    try {
      belief = await chosen.rail.precheck(decoded, { ...chosen.requirement, amount: least.toString(), maxAmountRequired: least.toString() }, {
        assertUnclaimed: (payer, nonce) => this.#assertUnclaimed(network, payer, nonce, paymentId),
        bounded: (work) => this.intake.bounded(clientKey, work),
        unknownPaymentMs: this.config.intake.algorandUnknownTxMs,
        cacheMs: this.config.intake.payerCheckCacheMs,
      })
    } catch (error) {
      // The same payment sent again with its identifier (its answer was lost): the identifier decides (#firstResult).
      // A used payment is no new one: its body waits in the small pool, as an unverifiable payer's does, so that a
      // payer resending a header it once paid with cannot hold the slots honest payments need.
      if (error instanceof ClaimedRetry) return { verified: false, release: () => {} }
      throw error
    }
    if (!belief.verified) this.#unverified(network, belief.why)
    return belief
  }

  /**
   * A refused payment whose body is larger than the unpaid limit, unread: the 402 with the refusal's reason and
   * requirements priced for the length the request declares (the whole multipart body, so at least the file's
   * price; at most the upload maximum's; chunked: just above the unpaid limit, the least the file can be), saying so — the exact price of the file is
   * `GET /store/quote`'s. Beyond the upload maximum nothing could store it: 413 `payload_too_large`.
   */
  async #refusedUnread(headers: HeaderBag, path: string, options: StoreOptions, refusal: BaseError, declaredBytes: bigint | undefined): Promise<BaseError> {
    const { maxUploadBytes, intake } = this.config
    const limit = intake.unpaidMaxBytes
    if (declaredBytes !== undefined && declaredBytes > maxUploadBytes + FRAMING_ALLOWANCE) return new PayloadTooLargeError(maxUploadBytes)
    const sizeBytes = declaredBytes === undefined ? limit + 1n : declaredBytes < maxUploadBytes ? declaredBytes : maxUploadBytes
    const offer = this.pricing.offer(path, sizeBytes, 'application/octet-stream', priceOf(await this.upstream.pricing(), sizeBytes))
    const priced = declaredBytes === undefined ? `more than ${limit} bytes (a chunked body)` : `${sizeBytes} bytes (the request declares ${declaredBytes})`
    const message = `${refusal.shortMessage} — the body was not read (above the ${limit} bytes read before a payment is believed); the requirements price ${priced}: GET /store/quote?bytes=<file size> gives the file's exact price`
    const version = decodePaymentHeader(headers)?.version ?? options.version ?? 2
    return this.pricing.paymentRequired(offer, await this.pricing.accepts(offer), version, refusal, options.extensions, message)
  }

  /** A payer could not be verified (its chain or node silent): said once a minute per network, not per request. */
  #unverified(network: string, why: string): void {
    const t = Date.now()
    if ((this.#unverifiedSaid.get(network) ?? 0) > t - 60_000) return
    this.#unverifiedSaid.set(network, t)
    this.#logger?.warn({ network, why }, 'upload payers cannot be verified now: they share the small pool (SERVICE_STORAGE__UNVERIFIED_UPLOADS)')
  }

  /**
   * 409 `payment_replayed` before anything is read: this payment already paid, or is paying, an upload or a call —
   * unless it carries a payment identifier an upload took in the last `RESEND_WINDOW_S`: then it is that upload's
   * request sent again (its answer lost), and `ClaimedRetry` lets it through to the identifier, which answers the
   * first request's result for the same payer and file and 409 otherwise; nothing of it is settled.
   */
  async #assertUnclaimed(network: string, payer: string, nonce: string, paymentId: string | undefined): Promise<void> {
    if (!(await PaymentClaims.isClaimed(this.ledger.db, { network, payer, nonce }))) return
    const since = Math.floor(Date.now() / 1000) - RESEND_WINDOW_S
    if (paymentId !== undefined && (await this.identifiers.isTaken('store', paymentId, since))) throw new ClaimedRetry()
    throw new PaymentReplayedError()
  }

  async #store(headers: HeaderBag, received: ReceivedUpload, path: string, options: StoreOptions): Promise<StoreOutcome> {
    let keepFile = false
    try {
      const outcome = await this.#storeReceived(headers, received, path, options, () => {
        keepFile = true
      })
      return outcome
    } finally {
      if (!keepFile) await rm(received.path, { force: true })
    }
  }

  /** Names of the settings every quote needs; empty when all are set. */
  missingSettings(): string[] {
    const missing = this.rails.missingSettings()
    if (!this.x402.facilitatorToken) missing.push('FACILITATOR_TOKEN')
    return missing
  }

  /**
   * `GET /store/quote`: what the 402 of an upload of `sizeBytes` would say — same formula, same
   * requirements — and until when that price is honoured (`SERVICE_STORAGE__QUOTE_VALIDITY_S`).
   */
  async quote(sizeBytes: bigint, options: { mimeType?: string; version?: 1 | 2; path?: string } = {}): Promise<{ body: StoreQuote; headers: Record<string, string> }> {
    const missing = this.missingSettings()
    if (missing.length > 0) throw new StorageNotConfiguredError(missing)
    return this.pricing.quote(sizeBytes, options)
  }

  /** `GET /.well-known/x402`: the paid resources of this service, with their rails and price rule. */
  async discovery(): Promise<X402DiscoveryDocument> {
    const missing = this.missingSettings()
    if (missing.length > 0) throw new StorageNotConfiguredError(missing)
    return this.pricing.discovery()
  }

  /**
   * Checks of `/health/detailed` for paid storage: the upstream (`/v1/rates`), the Arweave key, the facilitators
   * (`/supported`; ok while one answers), the Algorand node (`/v2/status`) and the upstream credit.
   */
  healthChecks(timeoutMs = 2_000): Record<string, () => Promise<Record<string, unknown> | void>> {
    return {
      storage_upstream: async () => {
        await this.upstream.rates()
      },
      // the key every upload is signed with: without it a replica took payments it could not store (its 502)
      arweave_key: async () => {
        await this.signer()
      },
      facilitator: async () => {
        const results = await Promise.allSettled(this.facilitator.clients.map((c) => c.supported(timeoutMs)))
        const down = this.facilitator.urls.filter((_, i) => results[i]?.status === 'rejected')
        if (down.length === results.length) throw new Error(`no facilitator answers (${down.join(', ')})`)
        if (down.length > 0) return { detail: `down: ${down.join(', ')}` }
      },
      ...this.rails.healthChecks(timeoutMs),
      upstream_credit: async () => {
        const state = await this.credit.read()
        return {
          status: state.low ? 'low' : 'ok',
          balance_winc: state.balanceWinc.toString(),
          low_winc: state.lowWinc.toString(),
          top_up: this.credit.topUpConfigured,
        }
      },
    }
  }

  async #storeReceived(headers: HeaderBag, file: MeasuredUpload | ReceivedUpload, path: string, options: StoreOptions, takeFile: () => void, refusal?: BaseError): Promise<StoreOutcome> {
    const missing = this.missingSettings()
    if (missing.length > 0) throw new StorageNotConfiguredError(missing)
    // 2. price (from a snapshot of the upstream's rates, remembered when quoted)
    const snapshot: PricingSnapshot = await this.upstream.pricing()
    const price = priceOf(snapshot, file.sizeBytes)
    const offer = this.pricing.offer(path, file.sizeBytes, file.mimeType, price)
    const accepts = await this.pricing.accepts(offer)
    const resourceUrl = offer.resourceUrl
    // 3. no payment header → 402 in the version asked for — unless the upstream credit cannot pay for it
    const decoded = decodePaymentHeader(headers)
    const version = decoded?.version ?? options.version ?? 2
    // …or a payment its rail's pre-check refused (the body was measured, not kept): 402 with the reason
    if (!decoded || refusal || !('path' in file)) {
      await this.credit.assertCanCover(file.sizeBytes)
      if (!refusal) this.priceHold.quoted(snapshot)
      throw this.pricing.paymentRequired(offer, accepts, version, refusal, options.extensions)
    }
    // 4. rail by accepted.network (a v1 name is CAIP-2 by now)
    const chosen = accepts.find((a) => a.requirement.network === decoded.network)
    if (!chosen) throw new UnsupportedNetworkError(decoded.network)
    const tagHeader = headers['x-svc-tag-app']
    const appName = tagHeader === undefined ? this.config.appName : headerText(tagHeader)
    if (!/^[\x20-\x7E]{1,128}$/.test(appName)) throw new InvalidTagError()
    // Before any money moves: can the prepaid upstream account pay for this upload?
    await this.credit.assertCanCover(file.sizeBytes)
    // A price quoted earlier (a 402 or GET /store/quote) still holds: the cheapest price honoured now is due.
    const prices = this.priceHold.acceptablePrices(snapshot, file.sizeBytes)
    const lowest = prices[0] as Price
    const requirement: PaymentRequirement = { ...chosen.requirement, amount: lowest.atomic.toString(), maxAmountRequired: lowest.atomic.toString() }
    // The amount, now that the size gives the price: an EVM authorization below it is refused before
    // anything is spooled (the rest was pre-checked before the body was read).
    try {
      chosen.rail.checkAmount(decoded, requirement)
    } catch (error) {
      if (error instanceof BaseError && PAYMENT_REFUSAL_CODES.has(error.code)) throw this.pricing.paymentRequired(offer, accepts, version, error, options.extensions)
      throw error
    }
    // The paid bytes move to the durable spool and the upload row exists *before* anything is settled, so
    // a crash at any later point leaves the payment, the payload and the bytes together on record.
    // The spool is shared (PostgreSQL, S3 or a mounted directory): any instance can finish the upload if this
    // one dies.
    const uploadId = newUploadId()
    // x402 payment-identifier: a retry of a paid upload with the identifier of the first gets the first's
    // result and pays nothing more; the identifier is taken before anything is spooled or settled.
    const paymentId = paymentIdentifierOf(decoded.payload)
    const identifier = paymentId ? { scope: 'store', id: paymentId, ref: uploadId, fingerprint: storeFingerprint(decoded, file) } : undefined
    if (identifier) {
      const first = await this.identifiers.take(identifier)
      if (!first.taken) return this.#firstResult(first, identifier.fingerprint, version)
    }
    const release = async () => {
      if (identifier) await this.identifiers.release(identifier).catch(() => undefined)
    }
    const kept = await this.spool.keep(uploadId, file.path, file.sizeBytes).catch(async (error: unknown) => {
      await release()
      throw error
    })
    if (!kept.ownsLocal) takeFile()
    const spoolPath = kept.ref
    const upload: NewUpload = { uploadId, depositId: '', sha256: file.sha256, mimeType: file.mimeType, sizeBytes: file.sizeBytes, appName, payerTag: '', spoolPath, owner: this.instanceId }
    let deposit: SettledDeposit
    try {
      deposit = await settleStorePayment(chosen.rail, { file, price: lowest, prices, resourceUrl, requirement, decoded, upload }, { ledger: this.ledger, facilitator: this.facilitator, logger: this.#logger })
    } catch (error) {
      const row = await this.ledger.getUploadRow(uploadId)
      if (!row) {
        await this.spool.remove(spoolPath).catch(() => undefined)
        await release()
      }
      // A refused payment (every 402 code) is answered with the requirements again, so the client can retry.
      if (error instanceof BaseError && PAYMENT_REFUSAL_CODES.has(error.code)) {
        throw this.pricing.paymentRequired(offer, accepts, version, error, options.extensions)
      }
      throw error
    }
    const settlement = deposit.settlement
    try {
      const stored = await this.uploadSpooled({ upload_id: uploadId, spool_path: spoolPath, local_path: kept.localPath, size_bytes: Number(file.sizeBytes), sha256: file.sha256, app_name: appName, payer_tag: deposit.payerTag, attempts: 0 })
      const result: UploadResult = { arTxId: stored.arTxId, sha256: file.sha256, sizeBytes: Number(file.sizeBytes), winc: stored.winc, settlement }
      return uploaded(result, version, uploadId)
    } catch (error) {
      const row = await this.ledger.getDeposit(deposit.depositId)
      const depositView = row ? viewDeposit(row) : undefined
      const statusUrl = `/store/uploads/${uploadId}`
      this.#logger?.warn({ upload_id: uploadId, deposit_id: deposit.depositId, err: String(error) }, 'paid upload queued after upstream failure')
      if (this.config.queueOnUpstreamFailure && depositView) {
        return { status: 202, body: { queue_id: uploadId, status: 'queued', status_url: statusUrl, deposit: depositView }, headers: {} }
      }
      throw new StorageUpstreamFailedError(
        `storage upstream failed; the payment is recorded and the upload is queued (${statusUrl})`,
        { cause: error, meta: { upload_id: uploadId, deposit_id: deposit.depositId, status_url: statusUrl } },
      )
    }
  }

  /**
   * The answer to a retry whose payment identifier was taken: the first request's result when it paid for the
   * same thing (200 stored, 202 queued), 409 `payment_replayed` while the first is still being paid or when the
   * identifier was used for another payment.
   */
  async #firstResult(first: { fingerprint: string; ref: string }, fingerprint: string, version: 1 | 2): Promise<StoreOutcome> {
    if (first.fingerprint !== fingerprint) throw new PaymentReplayedError('this payment identifier was used for another payment')
    const found = await this.ledger.getUpload(first.ref)
    if (!found || found.deposit.status !== 'settled' || found.upload.status === 'pending_payment') {
      throw new PaymentReplayedError('a payment with this identifier is still being settled; retry shortly')
    }
    const view = viewUpload(found.upload, found.deposit)
    if (view.result) return uploaded(view.result, version, view.upload_id)
    return { status: 202, body: { queue_id: view.upload_id, status: 'queued', status_url: `/store/uploads/${view.upload_id}`, deposit: view.deposit }, headers: {} }
  }

  /**
   * Signs and uploads a spooled, paid file held by this instance; records `stored` or re-queues with backoff.
   * `local_path`: the bytes are already in a local file (the request that received them).
   */
  async uploadSpooled(
    row: Pick<UploadRow, 'upload_id' | 'spool_path' | 'size_bytes' | 'sha256' | 'app_name' | 'payer_tag' | 'attempts'> & { local_path?: string },
  ): Promise<{ arTxId: string; winc: string | null }> {
    let opened: OpenedSpool | undefined
    try {
      if (!row.spool_path) throw new Error('spooled bytes missing')
      opened = row.local_path ? { path: row.local_path, release: async () => undefined } : await this.spool.open(row.spool_path, Number(row.size_bytes))
      const signer = await this.signer()
      const item = await signDataItemFromFile(signer, opened.path, BigInt(row.size_bytes), storageTags(row.app_name, row.sha256, row.payer_tag))
      const reply = await this.upstream.uploadDataItem(item.open(), item.length)
      if (reply.id && reply.id !== item.id) this.#logger?.warn({ ours: item.id, theirs: reply.id }, 'upstream reported another data item id')
      const recorded = await this.ledger.markStored(row.upload_id, item.id, reply.winc, seconds() + Math.ceil(this.config.verifyIntervalMs / 1000), this.instanceId)
      // Not recorded: this instance was presumed dead and another took the upload over; its bytes stay for it.
      if (recorded) {
        await this.spool.remove(row.spool_path)
        await this.#uploadEvents.stored(row.upload_id, item.id)
      } else this.#logger?.warn({ upload_id: row.upload_id, ar_tx_id: item.id }, 'upload was taken over by another instance; this copy is not recorded')
      return { arTxId: item.id, winc: reply.winc }
    } catch (error) {
      const delay = Math.min(this.config.retryIntervalMs * 2 ** Math.min(row.attempts, 16), MAX_RETRY_MS)
      await this.ledger.markQueued(row.upload_id, error instanceof Error ? error.message : String(error), seconds() + Math.ceil(delay / 1000), this.instanceId)
      throw error instanceof StorageUpstreamFailedError ? error : new StorageUpstreamFailedError('storage upload failed', { cause: error })
    } finally {
      await opened?.release()
    }
  }

  /** Records how `upload_id`'s verification ended and says so in the catalogue, once over every instance. */
  async recordVerification(uploadId: string, arTxId: string, outcome: Exclude<VerifyOutcome, { state: 'pending' }>): Promise<void> {
    const recorded = await this.ledger.recordVerification(uploadId, outcome.state === 'verified', outcome.state === 'failed' ? outcome.error : null)
    if (recorded) await this.#uploadEvents.verified(uploadId, arTxId, outcome)
  }

  /** Upload state; 404 for unknown ids and for uploads whose payment is not settled (nothing to show yet). */
  async getUpload(uploadId: string): Promise<UploadStatusView> {
    const found = UPLOAD_ID.test(uploadId) ? await this.ledger.getUpload(uploadId) : undefined
    if (!found || found.deposit.status !== 'settled' || found.upload.status === 'pending_payment') throw new UploadNotFoundError(uploadId)
    return viewUpload(found.upload, found.deposit)
  }

  /** The settled uploads `payer` paid for, newest first (`GET /store/uploads`, `/journal`). */
  async listUploads(payer: string, limit: number): Promise<UploadStatusView[]> {
    return (await this.ledger.listByPayer(payer, limit)).map(({ upload, deposit }) => viewUpload(upload, deposit))
  }
}

/** A claimed payment sent again with the identifier its upload took: not refused before the identifier is read. */
class ClaimedRetry extends Error {}

/**
 * How long after its upload took the identifier the same payment may be sent again for that upload's result (a
 * client retrying a lost answer does within minutes; the CLI for two): later, the resend is a replay (409).
 */
export const RESEND_WINDOW_S = 15 * 60

/** The 200 of a stored upload: the result and PAYMENT-RESPONSE (and X-PAYMENT-RESPONSE, in v1 terms, for a v1 payer). */
function uploaded(result: UploadResult, version: 1 | 2, uploadId: string): StoreOutcome {
  const headers: Record<string, string> = { [HEADER_PAYMENT_RESPONSE]: encodeBase64Json(paymentResponse(result)) }
  if (version === 1) {
    const settlement = result.settlement
    const v1 = { ...paymentResponse(result), network: v1NetworkName(String(settlement.network)) ?? settlement.network }
    headers[HEADER_X_PAYMENT_RESPONSE] = encodeBase64Json(v1)
  }
  return { status: 200, body: result, headers, uploadId }
}

/**
 * What a `/store` payment identifier binds: the network, who pays (the EVM payer; the Algorand transaction,
 * final once submitted) and the file. A retry re-signed by the same payer for the same file is the same payment.
 */
function storeFingerprint(decoded: DecodedPaymentHeader, file: Pick<ReceivedUpload, 'sha256' | 'sizeBytes'>): string {
  const p = decoded.payload.payload
  const authorization = p.authorization as { from?: unknown } | undefined
  const who = typeof authorization?.from === 'string' ? authorization.from.toLowerCase() : typeof p.txId === 'string' ? p.txId : ''
  return `${decoded.network}|${who}|${file.sha256}|${file.sizeBytes}`
}

/** An upload as `GET /store/uploads/{upload_id}` shows it (`UploadStatus`). */
function viewUpload(u: UploadRow, deposit: DepositRow): UploadStatusView {
  const settlement = parseSettlement(deposit)
  return {
    upload_id: u.upload_id,
    status: u.status as UploadStatusView['status'],
    ar_tx_id: u.ar_tx_id,
    sha256: u.sha256,
    size_bytes: Number(u.size_bytes),
    mime_type: u.mime_type,
    created_at: Number(u.created_at),
    updated_at: Number(u.updated_at),
    stored_at: u.ar_tx_id ? Number(u.stored_at ?? u.created_at) : null,
    deposit: viewDeposit(deposit),
    result: u.ar_tx_id ? { arTxId: u.ar_tx_id, sha256: u.sha256, sizeBytes: Number(u.size_bytes), winc: u.winc, settlement } : null,
    error: u.status === 'verify_failed' ? u.verify_error : u.last_error,
    attestation: viewAttestation(u),
  }
}

/** The recorded StorageAttest attestation; null until attested (or when its chain and contract predate 0008). */
function viewAttestation(u: UploadRow): UploadStatusView['attestation'] {
  if (!u.attest_tx_hash || u.attest_chain_id === null || !u.attest_contract) return null
  return { tx_hash: u.attest_tx_hash, chain_id: Number(u.attest_chain_id), contract: u.attest_contract }
}

function parseSettlement(d: DepositRow): Record<string, unknown> {
  try {
    const parsed = JSON.parse(d.settlement ?? 'null')
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>
  } catch {
    // fall through
  }
  return { success: true, transaction: d.tx_hash ?? '', network: d.network, payer: d.payer }
}

function headerText(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? ''
}

export function viewDeposit(d: DepositRow): DepositView {
  return {
    payer: d.payer,
    pay_to: d.pay_to,
    network: d.network,
    asset: d.asset,
    amount_atomic: d.amount_atomic,
    tx_hash: d.tx_hash ?? '',
    scheme: d.scheme,
    status: 'settled',
  }
}

/**
 * `PAYMENT-RESPONSE`: the upload result (seed 4.6) plus the x402 v2 settle-response fields at the top level
 * (`success`, `transaction`, `network`, `payer`), so stock v2 clients decode it as a SettleResponse too.
 */
export function paymentResponse(result: UploadResult): Record<string, unknown> {
  const s = result.settlement
  return { success: true, transaction: s.transaction, network: s.network, payer: s.payer, ...result }
}

