import { defineError } from '../shared/errors/defineError.js'

/** 400 `empty body` (seed 4.6 step 1). */
export const EmptyBodyError = defineError('EmptyBodyError', 'empty_body', () => 'empty body')
export type EmptyBodyError = InstanceType<typeof EmptyBodyError>

/** 400: not multipart/form-data, no `file` field, or a broken multipart body. */
export const InvalidMultipartError = defineError('InvalidMultipartError', 'invalid_multipart', (what: string, cause?: unknown) => ({ message: what, cause }))
export type InvalidMultipartError = InstanceType<typeof InvalidMultipartError>

/** 413: the file is larger than `SERVICE_STORAGE__MAX_UPLOAD_BYTES`. */
export const PayloadTooLargeError = defineError('PayloadTooLargeError', 'payload_too_large', (maxBytes: bigint) => ({
  message: `file larger than the maximum of ${maxBytes} bytes`,
  meta: { max_bytes: maxBytes.toString() },
  fields: { maxBytes },
}))
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>

/** 502 `storage_upstream_failed`. When the payment was already settled, `meta` says where the queued upload is. */
export const StorageUpstreamFailedError = defineError(
  'StorageUpstreamFailedError',
  'storage_upstream_failed',
  (message: string, parameters: { cause?: unknown; meta?: Record<string, unknown> } = {}) => ({ message, ...parameters }),
)
export type StorageUpstreamFailedError = InstanceType<typeof StorageUpstreamFailedError>

/** 404 for `GET /store/uploads/{upload_id}`. */
export const UploadNotFoundError = defineError('UploadNotFoundError', 'upload_not_found', (uploadId: string) => `no upload ${uploadId}`)
export type UploadNotFoundError = InstanceType<typeof UploadNotFoundError>

/** 400: `X-SVC-Tag-App` is not 1–128 printable ASCII characters (checked before any payment is taken). */
export const InvalidTagError = defineError('InvalidTagError', 'invalid_tag', () => 'X-SVC-Tag-App must be 1 to 128 printable ASCII characters')
export type InvalidTagError = InstanceType<typeof InvalidTagError>

/** 503: a payment rail is not configured (pay-to address, token address or facilitator token missing). */
export const StorageNotConfiguredError = defineError('StorageNotConfiguredError', 'storage_not_configured', (missing: string[]) => ({
  message: `paid storage is not configured: ${missing.join(', ')} unset`,
  meta: { missing },
  fields: { missing },
}))
export type StorageNotConfiguredError = InstanceType<typeof StorageNotConfiguredError>

/**
 * 503 (designed): the service's prepaid upstream account cannot pay for this upload. Answered before any
 * payment is verified or settled, so nothing is charged; retry after the top-up.
 */
export const UpstreamCreditInsufficientError = defineError(
  'UpstreamCreditInsufficientError',
  'upstream_credit_insufficient',
  (requiredWinc: bigint, balanceWinc: bigint, topUpRunning: boolean) => ({
    message: `storage credit is too low for this upload; nothing was charged${topUpRunning ? ' — a top-up is under way, retry shortly' : ''}`,
    meta: { required_winc: requiredWinc.toString(), balance_winc: balanceWinc.toString(), retry_after_s: topUpRunning ? 10 : 300 },
  }),
)
export type UpstreamCreditInsufficientError = InstanceType<typeof UpstreamCreditInsufficientError>

/** 503: this instance holds its maximum of uploads (of verified payers, or the small pool of unverifiable ones). */
export const TooManyUploadsError = defineError(
  'TooManyUploadsError',
  'too_many_uploads',
  (max: number, retryAfterS: number, pool: 'verified' | 'unverified' = 'verified') => ({
    message:
      pool === 'verified'
        ? `this instance is receiving its maximum of ${max} concurrent uploads; nothing was charged — retry after ${retryAfterS} s`
        : `this instance is receiving its maximum of ${max} concurrent uploads whose payer could not be verified now (the chain did not answer); nothing was charged — retry after ${retryAfterS} s`,
    meta: { max_concurrent_uploads: max, retry_after_s: retryAfterS, ...(pool === 'unverified' ? { pool } : {}) },
  }),
)
export type TooManyUploadsError = InstanceType<typeof TooManyUploadsError>
