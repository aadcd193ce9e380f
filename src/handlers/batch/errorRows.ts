import type { ErrorRows } from '../errorCatalogue.js'

/** The receipt batch (src/batch). */
export const batchErrorRows = {
  receipt_not_found: { status: 404 },
  receipt_mapping_failed: { status: 500 },
} as const satisfies ErrorRows
