import type { Env } from '../config/env.js'
import { readX402Config } from '../x402/config.js'
import { createRailRegistry, type RailPlugin } from '../x402/RailRegistry.js'

/**
 * The payment rails, registered once from `SERVICE_X402__*`, `SERVICE_ALGOD__*` and `FACILITATOR_TOKEN`: paid
 * storage, cost calls, discovery and the pages ask them. One unit, so the rails are built in one place.
 */
export function createPaymentRails(env: Env, plugins: readonly RailPlugin[] = []) {
  const x402 = readX402Config(env)
  const rails = createRailRegistry(x402, undefined, plugins)
  return { x402, rails }
}
