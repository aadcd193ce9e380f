/** Rows of the receipt batch for `src/handlers/errorCatalogue.ts`. */
export const batchErrorRows: Record<string, { status: number }> = {
  receipt_not_found: { status: 404 },
  receipt_mapping_failed: { status: 500 },
}
