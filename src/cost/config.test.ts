import { describe, expect, it } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { readTokenPricing } from './config.js'

describe('upto pricing settings', () => {
  it('defaults: 1 atomic unit per token, 10 at least, 100000 at most', () => {
    expect(readTokenPricing({})).toEqual({ perTokenMicro: 1_000_000n, minAtomic: 10n, maxAtomic: 100_000n })
    expect(readTokenPricing({ SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: '0.25' }).perTokenMicro).toBe(250_000n)
    expect(readTokenPricing({ SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: '0' }).perTokenMicro).toBe(0n)
  })
  it('refuses prices that are not amounts and a maximum below the minimum or one token', () => {
    for (const bad of ['-1', '1e3', 'abc', '0.0000001']) expect(() => readTokenPricing({ SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: bad })).toThrow(ConfigError)
    expect(() => readTokenPricing({ SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC: '50', SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: '40' })).toThrow(ConfigError)
    expect(() => readTokenPricing({ SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: '50', SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC: '0', SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: '40' })).toThrow(ConfigError)
    expect(() => readTokenPricing({ SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: '1.5' })).toThrow(ConfigError)
  })
})
