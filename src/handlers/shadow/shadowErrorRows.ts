import { SHADOW_ERROR_STATUS } from '../../overlord/ShadowError.js'

/** Rows of the shadow tier for `src/handlers/errorCatalogue.ts` (status per stable code). */
export const shadowErrorRows: Record<string, { status: number }> = {
  ...Object.fromEntries(Object.entries(SHADOW_ERROR_STATUS).map(([code, status]) => [code, { status }])),
  // CabinetRollbackError: a server-side step failed and everything was restored (CabinetOperationFailed).
  cabinet_operation_failed: { status: 500 },
}
