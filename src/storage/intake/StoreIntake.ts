import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import type { BaseError } from '../../shared/errors/BaseError.js'
import { type DecodedPaymentHeader, decodePaymentHeader } from '../../x402/headers.js'
import type { IntakeLimits } from '../config.js'
import { PayloadTooLargeError } from '../errors.js'
import { type MeasuredUpload, measureUpload, type ReceivedUpload, receiveUpload } from '../receiveUpload.js'
import type { SlotPool, UploadSlots } from '../UploadSlots.js'
import { AddressPermits, clientAddressKey } from './AddressPermits.js'
import { boundUnreadBody } from '../../shared/http/boundUnreadBody.js'
import { TooManyPaymentChecksError, TooManyUnpaidRequestsError, UnpaidBodyTooLargeError, UploadTooSlowError } from './errors.js'

export type IntakeRequest = Readable & {
  headers: Record<string, string | string[] | undefined>
  complete?: boolean
  socket?: Socket
  /** The response (Express sets `req.res`): an early answer closes the connection through it when it must. */
  res?: Pick<ServerResponse, 'headersSent' | 'setHeader'>
}

/**
 * What a pre-check found believable: `verified` (an upload slot of the main pool), or not verifiable now (the
 * small pool); `release` gives back what the check holds for it (the payer's funds in flight), with the slot.
 */
export type PaymentBelief = { verified: boolean; release: () => void }

/** What the intake hands on: a measured body to quote (402), or a received body with its upload slot. */
export type Admitted =
  | { paid: false; file: MeasuredUpload; decoded: DecodedPaymentHeader | null; refusal: BaseError | undefined }
  | { paid: true; file: ReceivedUpload; decoded: DecodedPaymentHeader; release: () => void }

export type IntakeSteps = {
  /** Checks that need neither header nor body (the service is configured); throws to refuse. */
  ready: () => void
  /**
   * The rail's pre-check of a decoded header, before any byte of the body is read: is the payment believable
   * (signed by its payer, funded, unused, within its window)? A refusal the client can fix by paying again
   * (`isRefusal`) is answered with the 402 of the measured body; anything else as it is.
   */
  precheck: (decoded: DecodedPaymentHeader, clientKey: string) => Promise<PaymentBelief>
  isRefusal: (error: unknown) => boolean
  /**
   * The answer to a refused payment whose body is larger than the unpaid limit (`declaredBytes`: its
   * `Content-Length`, undefined when chunked): the refusal's own reason (402), not the unpaid limit's 413 —
   * the sender meant to pay, and what it must fix is the payment.
   */
  refusedUnread: (refusal: BaseError, declaredBytes: bigint | undefined) => Promise<BaseError>
}

/** The measuring of a refused payment's body stopped at the unpaid limit (internal: `admit` answers the refusal). */
class RefusedBodyUnread extends Error {}

/** The request's declared length, when it declares one. */
function declaredLength(req: IntakeRequest): bigint | undefined {
  const text = req.headers['content-length']
  return typeof text === 'string' && /^\d{1,20}$/.test(text) ? BigInt(text) : undefined
}

export type StoreIntakeOptions = {
  limits: IntakeLimits
  slots: UploadSlots
  tmpDir: string
  maxUploadBytes: bigint
  retryAfterS: number
}

/**
 * Intake of `POST /store`: an unpaid request, or one whose payment is not believable, costs almost nothing.
 * In order:
 *
 * 1. a permit of the client address (IPv6: its /56): at most `unpaidPerAddress` requests in intake → 429;
 * 2. the service is configured; the payment header is decoded (400) and, when present, its rail pre-checked
 *    with what needs no size: EVM network, asset, payTo, validity window, the signer recovered and the payer's
 *    nonce and funds read on chain; Algorand: the node knows the transaction, to `payTo`, signed, able to
 *    confirm (bounded per address and in time) — a payment that is not believable is refused here;
 * 3. no header, or a refused pre-check: the body is *measured* — counted and hashed, never written — up to
 *    `unpaidMaxBytes`, for the 402 (which needs size and SHA-256); no upload slot. A refused payment whose body
 *    is larger (declared so: answered before it is read) gets its refusal (`refusedUnread`, 402 with the
 *    reason), not the unpaid limit's 413, which would send a payer to fix a size that is not its problem;
 * 4. a believed payment: an upload slot (503 beyond), then the body to the temp spool; a payer that could not
 *    be verified (chain or node silent) takes a slot of the small `unverified` pool instead. The amount, which
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
    let refusal: BaseError | undefined
    try {
      releasePermit = this.unpaid.acquire(key)
      steps.ready()
      const decoded = decodePaymentHeader(req.headers)
      let belief: PaymentBelief | undefined
      if (decoded) {
        try {
          belief = await steps.precheck(decoded, key)
        } catch (error) {
          if (!steps.isRefusal(error)) throw error
          refusal = error as BaseError
        }
      }
      if (!decoded || refusal || !belief) {
        const file = await measureUpload(req, { ...reading, maxBytes: limits.unpaidMaxBytes, tooLarge: (max) => this.#unpaidTooLarge(max, refusal) })
        return { paid: false, file, decoded, refusal }
      }
      const held = belief
      const pool: SlotPool = held.verified ? 'verified' : 'unverified'
      let slot: () => void
      try {
        slot = this.#o.slots.acquire(pool)
      } catch (error) {
        held.release()
        throw error
      }
      releaseSlot = () => {
        slot()
        held.release()
      }
      const file = await receiveUpload(req, { ...reading, tmpDir: this.#o.tmpDir, maxBytes: this.#o.maxUploadBytes })
      const release = releaseSlot
      releaseSlot = undefined
      return { paid: true, file, decoded, release }
    } catch (error) {
      releaseSlot?.()
      boundUnreadBody(req as unknown as IncomingMessage & { res?: IntakeRequest['res'] }, startBytes, bounds, { cut: error instanceof UploadTooSlowError })
      if (error instanceof RefusedBodyUnread && refusal) throw await steps.refusedUnread(refusal, declaredLength(req))
      throw error
    } finally {
      releasePermit?.()
    }
  }

  /**
   * A body above the unpaid limit: beyond the upload maximum 413 `payload_too_large`; else, with a refused
   * payment, its refusal (`RefusedBodyUnread`, answered by `admit`), and without one 413 `unpaid_body_too_large`.
   */
  #unpaidTooLarge(max: bigint, refusal: BaseError | undefined): Error {
    if (max >= this.#o.maxUploadBytes) return new PayloadTooLargeError(max)
    return refusal ? new RefusedBodyUnread() : new UnpaidBodyTooLargeError(max)
  }

  /** A pre-check's ledger reads under this address's permit (`algorandChecksPerAddress`, 429 beyond). */
  async bounded<T>(clientKey: string, work: () => Promise<T>): Promise<T> {
    const release = this.algorandChecks.acquire(clientKey)
    try {
      return await work()
    } finally {
      release()
    }
  }

}
