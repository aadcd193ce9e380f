import { defineError } from '../shared/errors/defineError.js'

/** 400: the tool's arguments are well-formed JSON but say something impossible (both `data_base64` and `url`…). */
export const InvalidToolArgumentsError = defineError('InvalidToolArgumentsError', 'invalid_arguments', (message: string) => message)
export type InvalidToolArgumentsError = InstanceType<typeof InvalidToolArgumentsError>

/** 400: `store_file`'s `url` is not on an origin of `SERVICE_MCP__FETCH_ORIGINS`. */
export const UrlNotAllowedError = defineError('UrlNotAllowedError', 'url_not_allowed', (origin: string) => `the gateway fetches files only from its allowed origins; ${origin} is not one`)
export type UrlNotAllowedError = InstanceType<typeof UrlNotAllowedError>

/** 502: the allowed origin did not give the file (status, redirect, timeout, size). */
export const UrlFetchFailedError = defineError('UrlFetchFailedError', 'url_fetch_failed', (message: string, cause?: unknown) => ({ message, cause }))
export type UrlFetchFailedError = InstanceType<typeof UrlFetchFailedError>

/** 413: a file above what the tool takes inline or fetches (`SERVICE_MCP__MAX_INLINE_BYTES` / `…_MAX_FETCH_BYTES`). */
export const ToolPayloadTooLargeError = defineError('ToolPayloadTooLargeError', 'payload_too_large', (what: string, maxBytes: number) => ({
  message: `${what} larger than the maximum of ${maxBytes} bytes`,
  meta: { max_bytes: String(maxBytes) },
}))
export type ToolPayloadTooLargeError = InstanceType<typeof ToolPayloadTooLargeError>
