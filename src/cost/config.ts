import { ConfigError } from '../config/ConfigError.js'
import type { Env } from '../config/env.js'
import { parsePerTokenMicro, type TokenPricing } from './tokenPricing.js'

function atomic(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  if (!/^\d{1,30}$/.test(raw)) throw new ConfigError(name, `must be a non-negative integer (atomic units), got ${JSON.stringify(raw)}`)
  return BigInt(raw)
}

/**
 * Paying past the quota with x402 `upto`, metered by the tokens a call produced:
 * - `SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC`: atomic units of USDC per produced (completion) token, up to six
 *   decimals (`0.25`); default `1` ($1 per million tokens); `0` turns `upto` off (`exact` stays);
 * - `SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC` (default `10`): the least a call that ran costs, zero tokens
 *   included; a permit allowing less is refused before the call runs;
 * - `SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC` (default `100000`, $0.10): the requirement's `amount`, the most
 *   one call may cost; generation is capped at ⌊max ÷ price⌋ tokens.
 */
export function readTokenPricing(env: Env = process.env): TokenPricing {
  const name = 'SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC'
  const raw = env[name]?.trim() || '1'
  const perTokenMicro = parsePerTokenMicro(raw)
  if (perTokenMicro === undefined) throw new ConfigError(name, `must be a non-negative number of atomic units with up to six decimals, got ${JSON.stringify(raw)}`)
  const minAtomic = atomic(env, 'SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC', 10n)
  const maxAtomic = atomic(env, 'SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC', 100_000n)
  if (perTokenMicro > 0n && (maxAtomic === 0n || maxAtomic < minAtomic || maxAtomic * 1_000_000n < perTokenMicro)) {
    throw new ConfigError('SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC', 'must be at least SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC and the price of one token')
  }
  return { perTokenMicro, minAtomic, maxAtomic }
}
