import { describe, expect, it } from 'vitest'
import { MetricsAccess } from './MetricsAccess.js'

const token = 'b3f1c2d4e5a69788a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718'

describe('MetricsAccess', () => {
  it('serves loopback scrapers without a token, as before', () => {
    for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(new MetricsAccess(undefined).check(ip, undefined)).toBeUndefined()
  })

  it('off loopback: the token is required, a wrong one refused, the right one served', () => {
    const access = new MetricsAccess(token)
    expect(access.check('203.0.113.9', undefined)).toBe('metrics_token_required')
    expect(access.check('203.0.113.9', 'Bearer nope')).toBe('metrics_token_invalid')
    expect(access.check('203.0.113.9', `Basic ${token}`)).toBe('metrics_token_required')
    expect(access.check('203.0.113.9', `Bearer ${token}`)).toBeUndefined()
    expect(access.check('10.0.0.2', `bearer ${token}`)).toBeUndefined()
  })

  it('off loopback without a configured token nobody is served, whatever they send', () => {
    const access = new MetricsAccess(undefined)
    expect(access.check('203.0.113.9', 'Bearer anything')).toBe('metrics_token_required')
    expect(access.check(undefined, undefined)).toBe('metrics_token_required')
  })
})
