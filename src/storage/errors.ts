import { BaseError } from '../shared/errors/BaseError.js'

/** 400 `empty body` (seed 4.6 step 1). */
export class EmptyBodyError extends BaseError<'empty_body'> {
  override name = 'EmptyBodyError'
  constructor() {
    super('empty_body', 'empty body')
  }
}

/** 400: not multipart/form-data, no `file` field, or a broken multipart body. */
export class InvalidMultipartError extends BaseError<'invalid_multipart'> {
  override name = 'InvalidMultipartError'
  constructor(what: string, cause?: unknown) {
    super('invalid_multipart', what, { cause })
  }
}

/** 413: the file is larger than `SERVICE_STORAGE__MAX_UPLOAD_BYTES`. */
export class PayloadTooLargeError extends BaseError<'payload_too_large'> {
  override name = 'PayloadTooLargeError'
  constructor(readonly maxBytes: bigint) {
    super('payload_too_large', `file larger than the maximum of ${maxBytes} bytes`, { meta: { max_bytes: maxBytes.toString() } })
  }
}

/** 502 `storage_upstream_failed`. When the payment was already settled, `meta` says where the queued upload is. */
export class StorageUpstreamFailedError extends BaseError<'storage_upstream_failed'> {
  override name = 'StorageUpstreamFailedError'
  constructor(message: string, parameters: { cause?: unknown; meta?: Record<string, unknown> } = {}) {
    super('storage_upstream_failed', message, parameters)
  }
}

/** 404 for `GET /store/uploads/{upload_id}`. */
export class UploadNotFoundError extends BaseError<'upload_not_found'> {
  override name = 'UploadNotFoundError'
  constructor(uploadId: string) {
    super('upload_not_found', `no upload ${uploadId}`)
  }
}

/** 400: `X-SVC-Tag-App` is not 1–128 printable ASCII characters (checked before any payment is taken). */
export class InvalidTagError extends BaseError<'invalid_tag'> {
  override name = 'InvalidTagError'
  constructor() {
    super('invalid_tag', 'X-SVC-Tag-App must be 1 to 128 printable ASCII characters')
  }
}

/** 503: a payment rail is not configured (pay-to address, token address or facilitator token missing). */
export class StorageNotConfiguredError extends BaseError<'storage_not_configured'> {
  override name = 'StorageNotConfiguredError'
  constructor(readonly missing: string[]) {
    super('storage_not_configured', `paid storage is not configured: ${missing.join(', ')} unset`, { meta: { missing } })
  }
}

/**
 * 503 (designed): the service's prepaid upstream account cannot pay for this upload. Answered before any
 * payment is verified or settled, so nothing is charged; retry after the top-up.
 */
export class UpstreamCreditInsufficientError extends BaseError<'upstream_credit_insufficient'> {
  override name = 'UpstreamCreditInsufficientError'
  constructor(requiredWinc: bigint, balanceWinc: bigint, topUpRunning: boolean) {
    super(
      'upstream_credit_insufficient',
      `storage credit is too low for this upload; nothing was charged${topUpRunning ? ' — a top-up is under way, retry shortly' : ''}`,
      { meta: { required_winc: requiredWinc.toString(), balance_winc: balanceWinc.toString(), retry_after_s: topUpRunning ? 10 : 300 } },
    )
  }
}

export class TooManyUploadsError extends BaseError<'too_many_uploads'> {
  override name = 'TooManyUploadsError'
  constructor(max: number, retryAfterS: number, pool: 'verified' | 'unverified' = 'verified') {
    super(
      'too_many_uploads',
      pool === 'verified'
        ? `this instance is receiving its maximum of ${max} concurrent uploads; nothing was charged — retry after ${retryAfterS} s`
        : `this instance is receiving its maximum of ${max} concurrent uploads whose payer could not be verified now (the chain did not answer); nothing was charged — retry after ${retryAfterS} s`,
      { meta: { max_concurrent_uploads: max, retry_after_s: retryAfterS, ...(pool === 'unverified' ? { pool } : {}) } },
    )
  }
}
