import { BaseError } from '../../shared/errors/BaseError.js'

/** Wire codes of the intake refusals (answered before any payment is looked at beyond its header). */
export const IntakeErrorCodes = {
  tooManyUnpaidRequests: 'too_many_unpaid_requests',
  tooManyPaymentChecks: 'too_many_payment_checks',
  uploadTooSlow: 'upload_too_slow',
  unpaidBodyTooLarge: 'unpaid_body_too_large',
  multipartTooManyParts: 'multipart_too_many_parts',
  multipartFieldTooLarge: 'multipart_field_too_large',
} as const

/** 429: this client address already has its maximum of `POST /store` requests in intake. */
export class TooManyUnpaidRequestsError extends BaseError<'too_many_unpaid_requests'> {
  override name = 'TooManyUnpaidRequestsError'
  constructor(max: number, retryAfterS: number) {
    super(IntakeErrorCodes.tooManyUnpaidRequests, `this address already has ${max} uploads being received; retry after ${retryAfterS} s`, {
      meta: { max_per_address: max, retry_after_s: retryAfterS },
    })
  }
}

/** 429: this client address already has its maximum of Algorand payments being looked up. */
export class TooManyPaymentChecksError extends BaseError<'too_many_payment_checks'> {
  override name = 'TooManyPaymentChecksError'
  constructor(max: number, retryAfterS: number) {
    super(IntakeErrorCodes.tooManyPaymentChecks, `this address already has ${max} Algorand payments being looked up; retry after ${retryAfterS} s`, {
      meta: { max_per_address: max, retry_after_s: retryAfterS },
    })
  }
}

/** 408: the body arrived slower than the minimum rate; the request is answered and the connection cut. */
export class UploadTooSlowError extends BaseError<'upload_too_slow'> {
  override name = 'UploadTooSlowError'
  constructor(minBytesPerSecond: number, windowS: number, receivedInWindow: number) {
    super(IntakeErrorCodes.uploadTooSlow, `the body arrived slower than ${minBytesPerSecond} bytes/s over ${windowS} s; the connection is closed`, {
      meta: { min_bytes_per_s: minBytesPerSecond, window_s: windowS, received_bytes_in_window: receivedInWindow },
    })
  }
}

/** 413: a request without a payment is larger than the service reads unpaid; quote the size instead. */
export class UnpaidBodyTooLargeError extends BaseError<'unpaid_body_too_large'> {
  override name = 'UnpaidBodyTooLargeError'
  constructor(maxBytes: bigint) {
    super(IntakeErrorCodes.unpaidBodyTooLarge, `a request without payment may carry at most ${maxBytes} bytes; ask GET /store/quote?bytes=<size> for the price, then send the file paid`, {
      meta: { max_unpaid_bytes: maxBytes.toString(), quote_url: '/store/quote' },
    })
  }
}

/** 413: the multipart body has more parts than allowed. */
export class MultipartTooManyPartsError extends BaseError<'multipart_too_many_parts'> {
  override name = 'MultipartTooManyPartsError'
  constructor(maxParts: number) {
    super(IntakeErrorCodes.multipartTooManyParts, `the multipart body has more than ${maxParts} parts`, { meta: { max_parts: maxParts } })
  }
}

/** 413: a non-file multipart field is longer than allowed. */
export class MultipartFieldTooLargeError extends BaseError<'multipart_field_too_large'> {
  override name = 'MultipartFieldTooLargeError'
  constructor(maxFieldBytes: number) {
    super(IntakeErrorCodes.multipartFieldTooLarge, `a multipart field other than \`file\` is longer than ${maxFieldBytes} bytes`, {
      meta: { max_field_bytes: maxFieldBytes },
    })
  }
}
