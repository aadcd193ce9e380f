/**
 * Shadow-overlord tier handlers (issue 4) — owned by the shadow engineer. Replace the 501 stubs with real
 * handlers, provide `initShadow` (services, the `overlordBearer` security handler, `cabinetRoster`,
 * `overlordAddress`) and add your error codes to `../errorCatalogue.ts`. See `../index.ts`.
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import { type DomainInit, type Handler, notImplemented } from '../types.js'

export const shadowHandlers = {
  createShadowChallenge: notImplemented,
  verifyShadowChallenge: notImplemented,
  getCabinetPreflight: notImplemented,
  provisionCabinet: notImplemented,
  clearCabinet: notImplemented,
  vaultSign: notImplemented,
  releaseKey: notImplemented,
  reunlockVault: notImplemented,
  getCabinetRoster: notImplemented,
  getCabinetPage: notImplemented,
  getCabinetHtml: notImplemented,
  getShadowOverlordPage: notImplemented,
} satisfies Partial<Record<OperationId, Handler>>

export const initShadow: DomainInit = () => ({})
