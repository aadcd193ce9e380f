import { defineError } from '../../shared/errors/defineError.js'

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
export const TooManyUnpaidRequestsError = defineError('TooManyUnpaidRequestsError', IntakeErrorCodes.tooManyUnpaidRequests, (max: number, retryAfterS: number) => ({
  message: `this address already has ${max} uploads being received; retry after ${retryAfterS} s`,
  meta: { max_per_address: max, retry_after_s: retryAfterS },
}))
export type TooManyUnpaidRequestsError = InstanceType<typeof TooManyUnpaidRequestsError>

/** 429: this client address already has its maximum of Algorand payments being looked up. */
export const TooManyPaymentChecksError = defineError('TooManyPaymentChecksError', IntakeErrorCodes.tooManyPaymentChecks, (max: number, retryAfterS: number) => ({
  message: `this address already has ${max} Algorand payments being looked up; retry after ${retryAfterS} s`,
  meta: { max_per_address: max, retry_after_s: retryAfterS },
}))
export type TooManyPaymentChecksError = InstanceType<typeof TooManyPaymentChecksError>

/** 408: the body arrived slower than the minimum rate; the request is answered and the connection cut. */
export const UploadTooSlowError = defineError('UploadTooSlowError', IntakeErrorCodes.uploadTooSlow, (minBytesPerSecond: number, windowS: number, receivedInWindow: number) => ({
  message: `the body arrived slower than ${minBytesPerSecond} bytes/s over ${windowS} s; the connection is closed`,
  meta: { min_bytes_per_s: minBytesPerSecond, window_s: windowS, received_bytes_in_window: receivedInWindow },
}))
export type UploadTooSlowError = InstanceType<typeof UploadTooSlowError>

/** 413: a request without a payment is larger than the service reads unpaid; quote the size instead. */
export const UnpaidBodyTooLargeError = defineError('UnpaidBodyTooLargeError', IntakeErrorCodes.unpaidBodyTooLarge, (maxBytes: bigint) => ({
  message: `a request without payment may carry at most ${maxBytes} bytes; ask GET /store/quote?bytes=<size> for the price, then send the file paid`,
  meta: { max_unpaid_bytes: maxBytes.toString(), quote_url: '/store/quote' },
}))
export type UnpaidBodyTooLargeError = InstanceType<typeof UnpaidBodyTooLargeError>

/** 413: the multipart body has more parts than allowed. */
export const MultipartTooManyPartsError = defineError('MultipartTooManyPartsError', IntakeErrorCodes.multipartTooManyParts, (maxParts: number) => ({
  message: `the multipart body has more than ${maxParts} parts`,
  meta: { max_parts: maxParts },
}))
export type MultipartTooManyPartsError = InstanceType<typeof MultipartTooManyPartsError>

/** 413: a non-file multipart field is longer than allowed. */
export const MultipartFieldTooLargeError = defineError('MultipartFieldTooLargeError', IntakeErrorCodes.multipartFieldTooLarge, (maxFieldBytes: number) => ({
  message: `a multipart field other than \`file\` is longer than ${maxFieldBytes} bytes`,
  meta: { max_field_bytes: maxFieldBytes },
}))
export type MultipartFieldTooLargeError = InstanceType<typeof MultipartFieldTooLargeError>
