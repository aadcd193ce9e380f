import type { HttpResult, RequestValidationIssue } from '../../shared/http/index.js'
import { ModelServerError } from '../errors.js'

/** The OCI distribution specification's error codes this server answers (plus `UNKNOWN`, as the reference registry). */
export type OciErrorCode =
  | 'BLOB_UNKNOWN'
  | 'BLOB_UPLOAD_INVALID'
  | 'BLOB_UPLOAD_UNKNOWN'
  | 'DIGEST_INVALID'
  | 'MANIFEST_BLOB_UNKNOWN'
  | 'MANIFEST_INVALID'
  | 'MANIFEST_UNKNOWN'
  | 'NAME_INVALID'
  | 'NAME_UNKNOWN'
  | 'SIZE_INVALID'
  | 'TOOMANYREQUESTS'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED'
  | 'UNKNOWN'

/** Status and message of each code, as the distribution specification (and the reference registry) words them. */
const catalogue = new Map<OciErrorCode, { status: number; message: string }>([
  ['BLOB_UNKNOWN', { status: 404, message: 'blob unknown to registry' }],
  ['BLOB_UPLOAD_INVALID', { status: 400, message: 'blob upload invalid' }],
  ['BLOB_UPLOAD_UNKNOWN', { status: 404, message: 'blob upload unknown to registry' }],
  ['DIGEST_INVALID', { status: 400, message: 'provided digest did not match uploaded content' }],
  ['MANIFEST_BLOB_UNKNOWN', { status: 400, message: 'manifest references a manifest or blob unknown to registry' }],
  ['MANIFEST_INVALID', { status: 400, message: 'manifest invalid' }],
  ['MANIFEST_UNKNOWN', { status: 404, message: 'manifest unknown' }],
  ['NAME_INVALID', { status: 400, message: 'invalid repository name' }],
  ['NAME_UNKNOWN', { status: 404, message: 'repository name not known to registry' }],
  ['SIZE_INVALID', { status: 413, message: 'provided length did not match content length' }],
  ['TOOMANYREQUESTS', { status: 429, message: 'too many requests' }],
  ['UNAUTHORIZED', { status: 401, message: 'authentication required' }],
  ['UNSUPPORTED', { status: 405, message: 'the operation is unsupported' }],
  ['UNKNOWN', { status: 500, message: 'unknown error' }],
])

export type OciErrorBody = { errors: Array<{ code: OciErrorCode; message: string; detail: unknown }> }

/** `{"errors":[{"code","message","detail"}]}` with the code's status; `detail` says which value was refused. */
export function ociError(code: OciErrorCode, detail: unknown = {}, message?: string): HttpResult & { body: OciErrorBody } {
  const entry = catalogue.get(code)!
  return { status: entry.status, body: { errors: [{ code, message: message ?? entry.message, detail }] } }
}

/** Our own errors thrown inside a registry operation, in the registry's shape (anything unknown: 500 `UNKNOWN`). */
export function ociErrorFor(error: unknown, message: string): HttpResult {
  if (error instanceof ModelServerError && error.status < 500) {
    switch (error.code) {
      case 'invalid_digest':
      case 'digest_mismatch':
        return ociError('DIGEST_INVALID', { reason: error.shortMessage })
      case 'invalid_manifest':
        return ociError('MANIFEST_INVALID', { reason: error.shortMessage })
      case 'invalid_model_name':
        return ociError('NAME_INVALID', { reason: error.shortMessage })
      case 'model_not_found':
        return ociError('MANIFEST_UNKNOWN', {})
      case 'blob_too_large':
        return ociError('SIZE_INVALID', { reason: error.shortMessage }, error.shortMessage)
      case 'invalid_api_key':
        return ociError('UNAUTHORIZED', {})
      case 'too_many_uploads':
        return ociError('TOOMANYREQUESTS', { reason: error.shortMessage }, error.shortMessage)
      default: {
        const result = ociError('UNKNOWN', { reason: error.code }, error.shortMessage)
        return { ...result, status: error.status === 404 ? 404 : 400 }
      }
    }
  }
  return ociError('UNKNOWN', {}, message)
}

/** A request that does not match the document: the code of the first refused value (path, query or body). */
export function ociValidationError(issues: ReadonlyArray<RequestValidationIssue>): HttpResult {
  const first = issues[0]
  const detail = first ? { location: first.location, path: first.path, reason: first.message } : {}
  const where = first?.path ?? ''
  if (first?.location === 'body') return ociError('MANIFEST_INVALID', detail)
  if (/digest/.test(where)) return ociError('DIGEST_INVALID', detail, 'invalid digest')
  if (/reference/.test(where)) return ociError('MANIFEST_INVALID', detail, 'invalid manifest reference')
  if (/uuid/.test(where)) return ociError('BLOB_UPLOAD_INVALID', detail)
  return ociError('NAME_INVALID', detail)
}
