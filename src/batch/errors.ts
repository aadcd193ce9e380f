import { BaseError } from '../shared/errors/BaseError.js'

export class BatchCommitFailedError extends BaseError<'batch_commit_failed'> {
  override name = 'BatchCommitFailedError'
  constructor(message: string, cause?: unknown) {
    super('batch_commit_failed', message, { cause })
  }
}

export class BatchTreeUploadFailedError extends BaseError<'batch_tree_upload_failed'> {
  override name = 'BatchTreeUploadFailedError'
  constructor(message: string, cause?: unknown) {
    super('batch_tree_upload_failed', message, { cause })
  }
}

export class ReceiptNotFoundError extends BaseError<'receipt_not_found'> {
  override name = 'ReceiptNotFoundError'
  constructor(arTxId: string) {
    super('receipt_not_found', `no receipt for ${arTxId}`)
  }
}

export class BatchConfigError extends BaseError<'batch_config_invalid'> {
  override name = 'BatchConfigError'
  constructor(message: string) {
    super('batch_config_invalid', message)
  }
}
