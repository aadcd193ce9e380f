import { describe, expect, it } from 'vitest'
import { isDatabaseUnavailable } from './DatabaseUnavailableError.js'

const driverError = (code: string, message = 'driver error') => Object.assign(new Error(message), { code })

describe('isDatabaseUnavailable', () => {
  it('counts the drivers\' errors of a database that cannot serve now, directly or as a cause', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR_WRITE', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', '08006', '08001', '53100', '53300', '57P01', '57P03']) {
      expect(isDatabaseUnavailable(driverError(code)), code).toBe(true)
      expect(isDatabaseUnavailable(new Error('wrapped', { cause: driverError(code) })), `${code} as a cause`).toBe(true)
    }
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true)
  })

  it('does not count a query the database refused, a bug, nor a network error of another upstream', () => {
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', '23505', '42P01', '40001', '57014', 'ECONNREFUSED', 'ETIMEDOUT']) {
      expect(isDatabaseUnavailable(driverError(code)), code).toBe(false)
    }
    expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'wallet')"))).toBe(false)
    expect(isDatabaseUnavailable('SQLITE_BUSY')).toBe(false)
    expect(isDatabaseUnavailable(undefined)).toBe(false)
  })
})
