import cors from 'cors'
import type { RequestHandler } from 'express'

export type CorsStageParameters = {
  /** Allowed origins; `*` anywhere in the list allows every origin (reflected, with credentials). */
  origins: readonly string[]
}

/**
 * Stage 1 (seed 000 §4.2 rule 1): CORS first — a browser preflight is answered here and never reaches the
 * rate limit or the gate. The headers are the ones the API reads (session, bearer, x402 payment, app tag)
 * and the ones a browser client must see (x402 requirement/receipt, Retry-After, Location).
 */
export function corsStage({ origins }: CorsStageParameters): RequestHandler {
  return cors({
    origin: origins.includes('*') ? true : [...origins],
    credentials: true,
    allowedHeaders: ['Content-Type', 'X-Session-Token', 'Authorization', 'PAYMENT-SIGNATURE', 'X-PAYMENT', 'X-SVC-Tag-App'],
    exposedHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'Retry-After', 'Location'],
    maxAge: 600,
  })
}
