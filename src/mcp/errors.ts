import { BaseError } from '../shared/errors/BaseError.js'

/** 400: the tool's arguments are well-formed JSON but say something impossible (both `data_base64` and `url`…). */
export class InvalidToolArgumentsError extends BaseError<'invalid_arguments'> {
  override name = 'InvalidToolArgumentsError'
  constructor(message: string) {
    super('invalid_arguments', message)
  }
}

/** 400: `store_file`'s `url` is not on an origin of `SERVICE_MCP__FETCH_ORIGINS`. */
export class UrlNotAllowedError extends BaseError<'url_not_allowed'> {
  override name = 'UrlNotAllowedError'
  constructor(origin: string) {
    super('url_not_allowed', `the gateway fetches files only from its allowed origins; ${origin} is not one`)
  }
}

/** 502: the allowed origin did not give the file (status, redirect, timeout, size). */
export class UrlFetchFailedError extends BaseError<'url_fetch_failed'> {
  override name = 'UrlFetchFailedError'
  constructor(message: string, cause?: unknown) {
    super('url_fetch_failed', message, { cause })
  }
}

/** 413: a file above what the tool takes inline or fetches (`SERVICE_MCP__MAX_INLINE_BYTES` / `…_MAX_FETCH_BYTES`). */
export class ToolPayloadTooLargeError extends BaseError<'payload_too_large'> {
  override name = 'ToolPayloadTooLargeError'
  constructor(what: string, maxBytes: number) {
    super('payload_too_large', `${what} larger than the maximum of ${maxBytes} bytes`, { meta: { max_bytes: String(maxBytes) } })
  }
}
