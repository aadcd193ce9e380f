import { storageErrorStatus } from '../../storage/httpStatus.js'

/** Rows of paid storage (x402 rails and upload) for `src/handlers/errorCatalogue.ts`. */
export const storageErrorRows: Record<string, { status: number }> = Object.fromEntries(
  Object.entries(storageErrorStatus).map(([code, status]) => [code, { status }]),
)
