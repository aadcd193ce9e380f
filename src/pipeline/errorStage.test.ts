import { describe, expect, it } from 'vitest'
import { BaseError } from '../shared/errors/BaseError.js'
import { createCapturingLogger } from '../../tests/support/createCapturingLogger.js'
import { gatewayCatalogue } from '../handlers/plugins.js'
import { errorStage } from './errorStage.js'

describe('errorStage', () => {
  it('maps a catalogued error code to its status and the Error body', () => {
    const { logger } = createCapturingLogger()
    const result = errorStage(logger, gatewayCatalogue)(new BaseError('agent_not_found', 'no such agent'), undefined)
    expect(result.status).toBe(404)
    expect(result.body).toMatchObject({ error: 'agent_not_found', message: 'no such agent' })
  })

  it('answers anything else 500 without detail and logs it with the operation', () => {
    const { logger, lines } = createCapturingLogger()
    const result = errorStage(logger, gatewayCatalogue)(new Error('ENOENT /srv/secret/path'), { operationId: 'listAgents' } as never)
    expect(result).toEqual({ status: 500, body: { error: 'internal_error', message: 'internal error' } })
    expect(JSON.stringify(result)).not.toContain('/srv/')
    expect(lines.at(-1)).toMatchObject({ operationId: 'listAgents', msg: 'unhandled error' })
  })
})
