import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import type algosdk from 'algosdk'
import type { BaseError } from '../../shared/errors/BaseError.js'
import { type DecodedPaymentHeader, decodePaymentHeader } from '../../x402/headers.js'
import type { IntakeLimits } from '../config.js'
import { PayloadTooLargeError } from '../errors.js'
import { type MeasuredUpload, measureUpload, type ReceivedUpload, receiveUpload } from '../receiveUpload.js'
import type { UploadSlots } from '../UploadSlots.js'
import { AddressPermits, clientAddressKey } from './AddressPermits.js'
import { boundUnreadBody } from '../../shared/http/boundUnreadBody.js'
import { TooManyPaymentChecksError, TooManyUnpaidRequestsError, UnpaidBodyTooLargeError, UploadTooSlowError } from './errors.js'
import { precheckAlgorandPayment } from './precheckAlgorandPayment.js'

export type IntakeRequest = Readable & {
  headers: Record<string, string | string[] | undefined>
  complete?: boolean
  socket?: Socket
  /** The response (Express sets `req.res`): an early answer closes the connection through it when it must. */
  res?: Pick<ServerResponse, 'headersSent' | 'setHeader'>
}

/** What the intake hands on: a measured body to quote (402), or a received body with its upload slot. */
export type Admitted =
  | { paid: false; file: MeasuredUpload; decoded: DecodedPaymentHeader | null; refusal: BaseError | undefined }
  | { paid: true; file: ReceivedUpload; decoded: DecodedPaymentHeader; release: () => void }

export type IntakeSteps = {
  /** Checks that need neither header nor body (the service is configured); throws to refuse. */
  ready: () => void
  /**
   * The rail's pre-check of a decoded header, before any byte of the body is read. A refusal the client can
   * fix by paying again (`isRefusal`) is answered with the 402 of the measured body; anything else as it is.
   */
  precheck: (decoded: DecodedPaymentHeader, clientKey: string) => Promise<void>
  isRefusal: (error: unknown) => boolean
}

export type StoreIntakeOptions = {
  limits: IntakeLimits
  slots: UploadSlots
  tmpDir: string
  maxUploadBytes: bigint
  retryAfterS: number
}

/**
 * Intake of `POST /store` (issue 26, "an unpaid request costs almost nothing"), in order:
 *
 * 1. a permit of the client address (IPv6: its /56): at most `unpaidPerAddress` requests in intake → 429;
 * 2. the service is configured; the payment header is decoded (400) and, when present, its rail pre-checked
 *    with what needs no size: EVM network, asset, payTo, validity window, signature shape; Algorand: the node
 *    knows the transaction, to `payTo` (bounded per address and in time);
 * 3. no header, or a refused pre-check: the body is *measured* — counted and hashed, never written — up to
 *    `unpaidMaxBytes`, for the 402 (which needs size and SHA-256); no upload slot;
 * 4. a pre-checked header: an upload slot (503 beyond), then the body to the temp spool. The amount, which
 *    needs the size's price, is checked by the caller before anything is kept or settled.
 *
 * Every body is read at `minBytesPerSecond` or faster and within the multipart bounds. An answer given before
 * the body was read drains or bounds the rest (`boundUnreadBody`).
 */
export class StoreIntake {
  readonly unpaid: AddressPermits
  readonly algorandChecks: AddressPermits
  readonly #o: StoreIntakeOptions

  constructor(options: StoreIntakeOptions) {
    this.#o = options
    const { limits, retryAfterS } = options
    this.unpaid = new AddressPermits(limits.unpaidPerAddress, () => new TooManyUnpaidRequestsError(limits.unpaidPerAddress, retryAfterS))
    this.algorandChecks = new AddressPermits(limits.algorandChecksPerAddress, () => new TooManyPaymentChecksError(limits.algorandChecksPerAddress, retryAfterS))
  }

  get limits(): IntakeLimits {
    return this.#o.limits
  }

  async admit(req: IntakeRequest, clientAddress: string | undefined, steps: IntakeSteps): Promise<Admitted> {
    const limits = this.#o.limits
    const startBytes = req.socket?.bytesRead ?? 0
    const key = clientAddressKey(clientAddress ?? req.socket?.remoteAddress)
    const bounds = { drainMaxBytes: limits.earlyDrainMaxBytes, lingerMs: limits.lingerMs }
    const reading = {
      limits: { maxParts: limits.maxParts, maxFieldBytes: limits.maxFieldBytes },
      minRate: { bytesPerSecond: limits.minBytesPerSecond, windowMs: limits.minRateWindowMs },
    }
    let releasePermit: (() => void) | undefined
    let releaseSlot: (() => void) | undefined
    try {
      releasePermit = this.unpaid.acquire(key)
      steps.ready()
      const decoded = decodePaymentHeader(req.headers)
      let refusal: BaseError | undefined
      if (decoded) {
        try {
          await steps.precheck(decoded, key)
        } catch (error) {
          if (!steps.isRefusal(error)) throw error
          refusal = error as BaseError
        }
      }
      if (!decoded || refusal) {
        const file = await measureUpload(req, { ...reading, maxBytes: limits.unpaidMaxBytes, tooLarge: (max) => (max < this.#o.maxUploadBytes ? new UnpaidBodyTooLargeError(max) : new PayloadTooLargeError(max)) })
        return { paid: false, file, decoded, refusal }
      }
      releaseSlot = this.#o.slots.acquire()
      const file = await receiveUpload(req, { ...reading, tmpDir: this.#o.tmpDir, maxBytes: this.#o.maxUploadBytes })
      const release = releaseSlot
      releaseSlot = undefined
      return { paid: true, file, decoded, release }
    } catch (error) {
      releaseSlot?.()
      boundUnreadBody(req as unknown as IncomingMessage & { res?: IntakeRequest['res'] }, startBytes, bounds, { cut: error instanceof UploadTooSlowError })
      throw error
    } finally {
      releasePermit?.()
    }
  }

  /** The Algorand pre-check under this address's permit (`algorandChecksPerAddress`, 429 beyond). */
  async precheckAlgorand(algod: algosdk.Algodv2, check: { txId: string; payTo: string; pollIntervalMs: number }, clientKey: string): Promise<void> {
    const release = this.algorandChecks.acquire(clientKey)
    try {
      await precheckAlgorandPayment(algod, { ...check, unknownTxMs: this.#o.limits.algorandUnknownTxMs })
    } finally {
      release()
    }
  }
}
