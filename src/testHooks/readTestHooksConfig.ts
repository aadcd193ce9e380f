import { ConfigError } from '../config/ConfigError.js'
import { type Env, envBool, envInt, envOptionalString } from '../config/env.js'
import { HOW_TO_MAKE_A_SECRET, weakSecretProblem } from '../shared/assessSecret.js'

/**
 * The test hooks port (`SERVICE_TEST_HOOKS=1`): off by default. When on, the gateway also listens on
 * 127.0.0.1:`SERVICE_TEST_HOOKS__PORT` (0: a free port, logged) for a conformance run's hooks, each request
 * carrying `Authorization: Bearer <SERVICE_TEST_HOOKS__TOKEN>` (required, at least 128 random bits: `openssl rand -hex 32`).
 * A deployment whose environment says production (`NODE_ENV=production`, as the container image sets it)
 * refuses to start with the hooks on: they move the clock, restart the service and fail its peers.
 */
export type TestHooksConfig = { port: number; token: string }

export function readTestHooksConfig(env: Env): TestHooksConfig | undefined {
  if (!envBool(env, 'SERVICE_TEST_HOOKS', false)) return undefined
  if (env.NODE_ENV?.trim().toLowerCase() === 'production') {
    throw new ConfigError('SERVICE_TEST_HOOKS', 'is refused when NODE_ENV=production: the test hooks move the clock, restart the service and fail its peers (a staging deployment sets NODE_ENV=staging)')
  }
  const token = envOptionalString(env, 'SERVICE_TEST_HOOKS__TOKEN')
  if (!token) throw new ConfigError('SERVICE_TEST_HOOKS__TOKEN', `is required with SERVICE_TEST_HOOKS=1 (${HOW_TO_MAKE_A_SECRET})`)
  const weak = weakSecretProblem(token)
  if (weak) throw new ConfigError('SERVICE_TEST_HOOKS__TOKEN', `${weak} (${HOW_TO_MAKE_A_SECRET})`)
  return { port: envInt(env, 'SERVICE_TEST_HOOKS__PORT', 0, { min: 0, max: 65_535 }), token }
}
