import express, { type Express } from 'express'
import type { GatewayApp } from '../app.js'
import type { Env } from '../config/env.js'

export type BuildGateway = (env: Env) => Promise<GatewayApp>

/**
 * The gateway behind the test hooks' `restart`: one HTTP server, the app behind it replaced in place. A restart
 * drains and closes the running app (its database handle, background work and the vault's key material with it)
 * and builds a new one from the start environment plus the restart's settings, on the same data directory and
 * database — what a process restart does to everything the gateway keeps (the vault starts sealed again).
 * Requests that arrive meanwhile wait for the new app.
 */
export class RestartableGateway {
  #current: GatewayApp
  #ready: Promise<void> = Promise.resolve()
  /** The Express app the HTTP server serves: every request goes to the app of the moment. */
  readonly app: Express

  constructor(
    first: GatewayApp,
    private readonly env: Env,
    private readonly build: BuildGateway,
  ) {
    this.#current = first
    this.app = express()
    this.app.disable('x-powered-by')
    this.app.use((req, res, next) => {
      this.#ready.then(
        () => this.#current.app(req, res, next),
        (error: unknown) => next(error),
      )
    })
  }

  current(): GatewayApp {
    return this.#current
  }

  /** Restarts with `overrides` over the start environment; if that app cannot start, the start environment's runs. */
  async restart(overrides: Record<string, string> = {}): Promise<void> {
    const previous = this.#current
    const step = (async () => {
      await previous.drain()
      await previous.close()
      try {
        this.#current = await this.build({ ...this.env, ...overrides })
      } catch (error) {
        this.#current = await this.build(this.env)
        await this.#current.start()
        throw error
      }
      await this.#current.start()
    })()
    this.#ready = step.catch(() => undefined)
    await step
  }
}
