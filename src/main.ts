/**
 * Starts the gateway: `npm run serve` (compiled: `node dist/src/main.js`) or through `npm start`.
 * Configuration comes from the environment (docs/gateway-core.md); a bad value stops the start with a
 * message naming the variable. SIGTERM/SIGINT: stop accepting connections, finish in-flight requests
 * (up to 10 s), stop background work, close the database, exit — also when stdout/stderr are gone (EPIPE is
 * ignored; log lines go out synchronously, so no exit-time flush can spin on a closed pipe).
 */
import type { AddressInfo } from 'node:net'
import { createApp } from './app.js'
import { ConfigError } from './config/ConfigError.js'
import { loadConfig } from './config/loadConfig.js'
import { createExpressServer } from './shared/http/createExpressServer.js'
import { createLogger } from './shared/logger.js'

// Output whose reader is gone (the parent died) must not take the process down or block it: stray writes
// (console, libraries) to a closed stdout/stderr are dropped. The logger handles EPIPE itself (shared/logger.ts).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
}

async function main(): Promise<void> {
  let config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
  const logger = createLogger({ name: 'gateway', level: config.logLevel })
  let gateway
  try {
    gateway = await createApp({ config, logger })
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    logger.fatal({ err: error }, 'gateway failed to start')
    process.exit(1)
  }
  // Bounded: header size and count, time to send the headers, time for the whole request (docs/reliability.md).
  // Requests and responses are born with Express's prototypes (no per-request `setPrototypeOf`; see createExpressServer).
  const server = createExpressServer(gateway.app, {
    maxHeaderSize: config.http.maxHeaderBytes,
    headersTimeout: config.http.headersTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
  })
  server.maxHeadersCount = config.http.maxHeadersCount
  server.listen(config.port, config.host)
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch((error: NodeJS.ErrnoException) => {
    logger.fatal({ err: error }, `cannot listen on ${config.host}:${config.port}`)
    process.exit(1)
  })
  server.keepAliveTimeout = 65_000

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    const force = setTimeout(() => {
      logger.warn('in-flight requests did not finish in 10 s; closing connections')
      server.closeAllConnections()
    }, 10_000)
    force.unref()
    // Backstop: whatever still hangs (a stuck close), the process leaves 20 s after the signal.
    setTimeout(() => process.exit(1), 20_000).unref()
    server.closeIdleConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    clearTimeout(force)
    await gateway.close()
    logger.info('stopped')
    process.exit(0)
  }
  // Before the "listening" line: whoever reads it may signal at once, and until a handler exists a SIGTERM
  // kills the process outright (no shutdown).
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  await gateway.start()
  const port = (server.address() as AddressInfo).port
  logger.info({ port, publicOrigin: config.publicOrigin, database: gateway.services.dialect }, `gateway listening on http://localhost:${port}`)
}

void main()
