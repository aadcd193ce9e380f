import type { PostgresPool } from 'kysely'
import { describe, expect, it } from 'vitest'
import { DatabaseUnavailableError } from './DatabaseUnavailableError.js'
import { unreachableAsUnavailable } from './unreachableAsUnavailable.js'

const failing = (error: Error): PostgresPool => ({ connect: () => Promise.reject(error), end: () => Promise.resolve(), options: {} })
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

describe('unreachableAsUnavailable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a name that does not resolve', withCode('getaddrinfo ENOTFOUND db.internal', 'ENOTFOUND')],
    ['a server still starting (57P03)', withCode('the database system is starting up', '57P03')],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['no connection free in time (no code)', new Error('timeout exceeded when trying to connect')],
  ])('%s: DatabaseUnavailableError, the driver error as its cause', async (_what, error) => {
    const thrown = await unreachableAsUnavailable(failing(error)).connect().catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(DatabaseUnavailableError)
    expect((thrown as Error).cause).toBe(error)
  })

  it.each([
    ['a wrong password (28P01)', withCode('password authentication failed for user "gw"', '28P01')],
    ['a database that does not exist (3D000)', withCode('database "gw" does not exist', '3D000')],
  ])('%s: thrown as it is (a setting to fix, not an outage to wait out)', async (_what, error) => {
    await expect(unreachableAsUnavailable(failing(error)).connect()).rejects.toBe(error)
  })
})
