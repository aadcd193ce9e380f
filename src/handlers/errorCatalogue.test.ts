import { describe, expect, it } from 'vitest'
import { SHADOW_ERROR_CODES, ShadowError } from '../overlord/ShadowError.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { PAYMENT_REFUSAL_CODES } from '../storage/paymentRefusals.js'
import { errorCatalogue, errorToResult, shadowErrorRows, storageErrorRows } from './errorCatalogue.js'

describe('paid-storage rows of the error catalogue', () => {
  it('lists every storage and x402 code with its status; client mistakes are never 5xx', () => {
    for (const [code, row] of Object.entries(storageErrorRows)) {
      expect(errorCatalogue[code], code).toEqual(row)
      if (!['storage_upstream_failed', 'facilitator_unavailable', 'settlement_pending', 'ledger_node_unavailable', 'storage_not_configured', 'upstream_credit_insufficient', 'too_many_uploads'].includes(code)) expect(row.status).toBeLessThan(500)
    }
  })

  it('answers 402 exactly for the codes storage treats as a refused payment (requirements sent again)', () => {
    const answered402 = Object.entries(storageErrorRows).filter(([, row]) => row.status === 402).map(([code]) => code)
    expect(new Set(answered402)).toEqual(PAYMENT_REFUSAL_CODES)
  })
})

describe('the gateway error table (one mapping for every domain)', () => {
  it('maps every shadow-tier code; the error itself carries no status', () => {
    for (const code of SHADOW_ERROR_CODES) expect(errorCatalogue[code], code).toEqual(shadowErrorRows[code])
    const sealed = new ShadowError('vault_locked', 'The vault is sealed.')
    expect('status' in sealed).toBe(false)
    expect(errorToResult(sealed)).toEqual({ status: 423, body: { error: 'vault_locked', message: 'The vault is sealed.' } })
  })

  it('leaves an unlisted code (even one named like an Object property) to the 500 path', () => {
    for (const code of ['no_such_code', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(errorToResult(new BaseError(code, 'x')), code).toBeUndefined()
    }
  })
})
