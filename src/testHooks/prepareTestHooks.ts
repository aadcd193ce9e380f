import type { Express } from 'express'
import type { GatewayApp } from '../app.js'
import type { Env } from '../config/env.js'
import type { Logger } from '../shared/logger.js'
import { startHooksServer } from './hooksServer.js'
import { interposePeers } from './interposePeers.js'
import { readTestHooksConfig } from './readTestHooksConfig.js'
import { type BuildGateway, RestartableGateway } from './RestartableGateway.js'

/** The gateway served with its hooks: the Express app to listen with, the app of the moment, the hooks' URL. */
export type ServedWithHooks = { app: Express; current: () => GatewayApp; url: string; close: () => Promise<void> }

export type TestHooks = {
  /** The environment to configure the gateway with: every http(s) peer through its fault proxy. */
  env: Env
  /** The gateway's clock (epoch seconds), moved by `POST /clock`. */
  now: () => number
  /** Starts the hooks port over the first app; `build` makes the app of a restart. */
  serve: (first: GatewayApp, build: BuildGateway, logger: Logger) => Promise<ServedWithHooks>
}

/**
 * The test hooks of a deployment started with `SERVICE_TEST_HOOKS=1` (readTestHooksConfig.ts), or undefined when
 * they are off. Throws the ConfigError of a refused start (production, no token). Used by src/main.ts before the
 * gateway is configured, since the peers' URLs are replaced by their fault proxies' (interposePeers.ts).
 */
export async function prepareTestHooks(env: Env): Promise<TestHooks | undefined> {
  const config = readTestHooksConfig(env)
  if (!config) return undefined
  const interposed = await interposePeers(env)
  const clock = { offsetS: 0 }
  return {
    env: interposed.env,
    now: () => Math.floor(Date.now() / 1000) + clock.offsetS,
    serve: async (first, build, logger) => {
      const gateway = new RestartableGateway(first, interposed.env, build)
      const hooks = await startHooksServer({ port: config.port, token: config.token, env: interposed.env, gateway, peers: interposed.peers, clock, logger })
      logger.warn({ hooks: hooks.url, peers: [...interposed.peers.keys()] }, `TEST HOOKS ON at ${hooks.url}: the clock, restarts and peer faults are open to the token's holder (never in production)`)
      return {
        app: gateway.app,
        current: () => gateway.current(),
        url: hooks.url,
        close: async () => {
          await hooks.close()
          await Promise.all([...interposed.peers.values()].map((peer) => peer.proxy.close()))
        },
      }
    },
  }
}
