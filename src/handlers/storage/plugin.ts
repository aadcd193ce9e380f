import { StorageNotConfiguredError } from '../../storage/errors.js'
import { storageErrorRows } from '../errorCatalogue.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { initStorage } from './index.js'
import { storageHandlers } from './storageHandlers.js'

/** Paid storage: `/store`, its quote, uploads and the x402 discovery document. */
export const storagePlugin = {
  name: 'storage',
  create: initStorage,
  handlers: storageHandlers,
  errorRows: storageErrorRows,
  notBuilt: { status: 503, error: () => new StorageNotConfiguredError(['SERVICE_STORAGE__*']) },
} satisfies HttpPlugin
