import { ConfigError } from '../../config/ConfigError.js'
import { type Env, envInt, envString } from '../../config/env.js'

/**
 * x402 `batch-settlement` (`SERVICE_X402__BATCH__*`), offered beside `exact` and `upto` on cost calls when the
 * receiver-authorizer key is set:
 * - `SERVICE_X402__BATCH__AUTHORIZER_KEY`: the private key (0x, 32 bytes) that signs the server's claims and
 *   refunds (EIP-712 `ClaimBatch`, `Refund`); its address is every channel's `receiverAuthorizer`. It moves no
 *   money of its own and needs no ETH: the facilitator relays what it signs. Unset: the scheme is not offered.
 * - `SERVICE_X402__BATCH__WITHDRAW_DELAY_S` (86400, 900…2592000): how long a payer's timed withdrawal waits,
 *   the window the server has to claim what it served.
 * - `SERVICE_X402__BATCH__CLAIM_INTERVAL_S` (3600; 0: only on demand): how often the vouchers not yet claimed
 *   are claimed in one transaction per chain and the claimed funds swept to `SERVICE_X402__PAY_TO_EVM`.
 * - `SERVICE_X402__BATCH__REFUND_IDLE_S` (0: off): channels idle that long get their unclaimed deposit back.
 * - `SERVICE_X402__BATCH__MIN_DEPOSIT_CALLS` (10): the deposit a 402 suggests, in calls at the most a call costs.
 */
/** The escrow's bounds on a channel's withdraw delay (15 minutes – 30 days); a deposit outside them reverts. */
const MIN_WITHDRAW_DELAY = 900
const MAX_WITHDRAW_DELAY = 30 * 86_400

export type BatchSettlementConfig = {
  authorizerKey: `0x${string}` | undefined
  withdrawDelayS: number
  claimIntervalS: number
  refundIdleS: number
  minDepositCalls: number
}

export function readBatchSettlementConfig(env: Env = process.env): BatchSettlementConfig {
  const key = envString(env, 'SERVICE_X402__BATCH__AUTHORIZER_KEY', '')
  if (key !== '' && !/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ConfigError('SERVICE_X402__BATCH__AUTHORIZER_KEY', 'is not a 0x private key of 32 bytes')
  return {
    authorizerKey: key === '' ? undefined : (key as `0x${string}`),
    withdrawDelayS: envInt(env, 'SERVICE_X402__BATCH__WITHDRAW_DELAY_S', 86_400, { min: MIN_WITHDRAW_DELAY, max: MAX_WITHDRAW_DELAY }),
    claimIntervalS: envInt(env, 'SERVICE_X402__BATCH__CLAIM_INTERVAL_S', 3_600, { min: 0, max: 30 * 86_400 }),
    refundIdleS: envInt(env, 'SERVICE_X402__BATCH__REFUND_IDLE_S', 0, { min: 0, max: 365 * 86_400 }),
    minDepositCalls: envInt(env, 'SERVICE_X402__BATCH__MIN_DEPOSIT_CALLS', 10, { min: 1, max: 1_000_000 }),
  }
}
