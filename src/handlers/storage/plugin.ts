import { StorageNotConfiguredError } from '../../storage/errors.js'
import { storageErrorRows } from './errorRows.js'
import { listMyUploads } from '../core/activity.js'
import { getStoragePage } from '../core/pages.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { initStorage } from './index.js'
import { storageMcpTools } from './mcpTools.js'
import { storageHandlers } from './storageHandlers.js'

/** Paid storage: `/store`, its quote, uploads and the x402 discovery document. */
export const storagePlugin = {
  name: 'storage',
  create: initStorage,
  // the /storage/ page and a wallet's uploads read paid storage's ledger
  handlers: { ...storageHandlers, getStoragePage, listMyUploads },
  errorRows: storageErrorRows,
  mcpTools: storageMcpTools,
  notBuilt: { code: 'storage_not_configured', error: () => new StorageNotConfiguredError(['SERVICE_STORAGE__*']) },
} satisfies HttpPlugin
