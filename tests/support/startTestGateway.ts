import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import type { PrivateKeyAccount } from 'viem/accounts'
import { createApp, type GatewayApp } from '../../src/app.js'
import type { RailPlugin } from '../../src/x402/RailRegistry.js'
import { loadConfig } from '../../src/config/loadConfig.js'
import { createGatewayServer } from '../../src/createGatewayServer.js'
import { createDatabase, type DatabaseDialect, type DatabaseHandle } from '../../src/db/createDatabase.js'
import { createTestDatabase, type TestDatabase } from './testDatabase.js'
import type { ResponseValidationReport } from '../../src/shared/http/index.js'
import { createCapturingLogger } from './createCapturingLogger.js'
import { walletLogin } from './walletLogin.js'

export type TestGateway = {
  url: string
  gateway: GatewayApp
  env: Record<string, string | undefined>
  /** URL of its database (a second gateway can share it: `startTestGateway({ databaseUrl })`). */
  databaseUrl: string
  /** Its database handle (its `db`, its change feed). */
  database: DatabaseHandle
  /** Every response that did not match the document (tests assert it stays empty). */
  validationErrors: ResponseValidationReport[]
  logText: () => string
  /** Moves the gateway's clock (seconds). */
  advance: (seconds: number) => void
  /** Wallet login through the HTTP API; returns the session token. */
  login: (account: PrivateKeyAccount) => Promise<string>
  close: () => Promise<void>
}

export type StartTestGatewayParameters = {
  dialect?: DatabaseDialect
  env?: Record<string, string>
  modelServerUrl?: string
  /** Share an existing database (a second instance); it is left in place on close. Default: a fresh one. */
  databaseUrl?: string
  /** With `SERVICE_TRACING__ENABLED=1` in `env`: where the spans go (an in-memory exporter). */
  spanExporter?: SpanExporter
  /** Payment rails registered after the configured ones. */
  railPlugins?: RailPlugin[]
}

/**
 * The whole gateway (default domains) on a free port with a fresh database and data dir, response
 * validation in `error` mode (a response that breaks the document becomes a 500 and is recorded).
 */
export async function startTestGateway(p: StartTestGatewayParameters = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-app-'))
  const database: TestDatabase | (DatabaseHandle & { url: string }) = p.databaseUrl
    ? { ...(await createDatabase({ url: p.databaseUrl })), url: p.databaseUrl }
    : await createTestDatabase(p.dialect ?? 'sqlite')
  const env: Record<string, string | undefined> = {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: '0',
    SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
    SERVICE_LLM__MODELSERVER__BASE_URL: p.modelServerUrl ?? 'http://127.0.0.1:9',
    SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '2000',
    SERVICE_RATE_LIMIT__MAX: '100000',
    ...p.env,
  }
  const config = loadConfig(env)
  let offset = 0
  const now = () => Math.floor(Date.now() / 1000) + offset
  const validationErrors: ResponseValidationReport[] = []
  const { logger, text } = createCapturingLogger({ name: 'gateway-test' })
  const gateway = await createApp({
    config,
    env,
    database,
    logger,
    now,
    responseValidation: 'error',
    onResponseValidationError: (r) => validationErrors.push(r),
    spanExporter: p.spanExporter,
    ...(p.railPlugins ? { railPlugins: p.railPlugins } : {}),
  })
  const server: Server = createGatewayServer(gateway.app, config.http).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    gateway,
    env,
    databaseUrl: database.url,
    database,
    validationErrors,
    logText: text,
    advance: (s) => {
      offset += s
    },
    login: (account) => walletLogin(url, account),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await gateway.close()
      await database.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
