import { describe, expect, it } from 'vitest'
import { errorCatalogue } from '../errorCatalogue.js'
import { storageErrorRows } from './storageErrorRows.js'

describe('paid-storage rows of the error catalogue', () => {
  it('lists every storage and x402 code with its status; client mistakes are never 5xx', () => {
    for (const [code, row] of Object.entries(storageErrorRows)) {
      expect(errorCatalogue[code], code).toEqual(row)
      if (!['storage_upstream_failed', 'facilitator_unavailable', 'ledger_node_unavailable', 'storage_not_configured', 'upstream_credit_insufficient', 'too_many_uploads'].includes(code)) expect(row.status).toBeLessThan(500)
    }
  })
})
