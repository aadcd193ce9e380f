import { defineError } from '../shared/errors/defineError.js'

export const BatchCommitFailedError = defineError('BatchCommitFailedError', 'batch_commit_failed', (message: string, cause?: unknown) => ({ message, cause }))
export type BatchCommitFailedError = InstanceType<typeof BatchCommitFailedError>

export const BatchTreeUploadFailedError = defineError('BatchTreeUploadFailedError', 'batch_tree_upload_failed', (message: string, cause?: unknown) => ({ message, cause }))
export type BatchTreeUploadFailedError = InstanceType<typeof BatchTreeUploadFailedError>

export const ReceiptNotFoundError = defineError('ReceiptNotFoundError', 'receipt_not_found', (arTxId: string) => `no receipt for ${arTxId}`)
export type ReceiptNotFoundError = InstanceType<typeof ReceiptNotFoundError>

export const BatchConfigError = defineError('BatchConfigError', 'batch_config_invalid', (message: string) => message)
export type BatchConfigError = InstanceType<typeof BatchConfigError>
