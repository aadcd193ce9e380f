/**
 * Starts the gateway: `npm run serve` (compiled: `node dist/src/main.js`) or through `npm start`.
 * Configuration comes from the environment (docs/configuration.md); a bad value stops the start with a
 * message naming the variable. A production start (`SERVICE_PROFILE` unset or `production`) that lacks a setting
 * whose default is a devnet address, or whose data directory is the devnet's, is refused with the list of what to
 * set (src/config/profile.ts); `npm start` chooses `SERVICE_PROFILE=devnet`. A data directory that `npm start` or another
 * gateway runs on is refused at once, naming its pid (`<data dir>/in-use.json`, src/shared/dataDirLock/); the gateway
 * `npm start` runs is its child and works under its lock. SIGTERM/SIGINT: stop accepting connections, finish in-flight requests
 * (up to the deadline), stop background work, close the database, exit — also when stdout/stderr are gone (EPIPE is
 * ignored; log lines go out synchronously, so no exit-time flush can spin on a closed pipe). The stop is a
 * rolling restart's (docs/reliability.md): `GET /health/ready` fails at once, in-flight requests finish up to
 * `SERVICE_SHUTDOWN__DEADLINE_MS`, this instance's work is handed over.
 */
// Only what the refusals below need is imported up front: the gateway's modules (seconds through tsx) load once
// the data directory is this process's, so a refused start says so at once.
import type { AddressInfo } from 'node:net'
import { ConfigError } from './config/ConfigError.js'
import type { Env } from './config/env.js'
import { loadConfig } from './config/loadConfig.js'
import { productionStartRefusal } from './config/profile.js'
import { holdDataDir, recordGatewayPort } from './shared/dataDirLock/holdDataDir.js'
import { createLogger } from './shared/logger.js'
import { readTestHooksConfig } from './testHooks/readTestHooksConfig.js'

// Output whose reader is gone (the parent died) must not take the process down or block it: stray writes
// (console, libraries) to a closed stdout/stderr are dropped. The logger handles EPIPE itself (shared/logger.ts).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
}

async function main(): Promise<void> {
  let config
  // Off by default: `SERVICE_TEST_HOOKS=1` (refused with NODE_ENV=production) puts the peers behind fault proxies.
  let testHooks
  try {
    testHooks = readTestHooksConfig(process.env) ? await (await import('./testHooks/prepareTestHooks.js')).prepareTestHooks(process.env) : undefined
    config = loadConfig(testHooks?.env ?? process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
  const refusal = config.profile === 'production' ? productionStartRefusal(process.env, config.dataDir) : undefined
  if (refusal) {
    process.stderr.write(`${refusal}\n`)
    process.exit(1)
  }
  // npm start, or another gateway, running on this data directory: one database and one vault for two processes
  const held = holdDataDir(config.dataDir)
  if (held) {
    process.stderr.write(`${held.join('\n')}\n`)
    process.exit(1)
  }
  const [{ createApp }, { createGatewayServer }, { drainHttpServer }] = await Promise.all([
    import('./app.js'),
    import('./createGatewayServer.js'),
    import('./shared/http/drainHttpServer.js'),
  ])
  const logger = createLogger({ name: 'gateway', level: config.logLevel })
  const env = testHooks?.env ?? process.env
  const build = (e: Env) => createApp({ config: e === env ? config : loadConfig(e), env: e, logger, now: testHooks?.now })
  let gateway
  try {
    gateway = await build(env)
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
  const hooks = testHooks ? await testHooks.serve(gateway, build, logger) : undefined
  const server = createGatewayServer(hooks?.app ?? gateway.app, config.http)
  server.listen(config.port, config.host)
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch((error: NodeJS.ErrnoException) => {
    logger.fatal({ err: error }, `cannot listen on ${config.host}:${config.port}`)
    process.exit(1)
  })

  let stopping = false
  // A rolling restart: readiness fails at once and no new background work is taken; for
  // SERVICE_SHUTDOWN__DRAIN_DELAY_MS the replica still serves what the balancer sends before its next check, and
  // then until no request has come for SERVICE_SHUTDOWN__QUIET_MS;
  // then it stops accepting, finishes in-flight requests (uploads, streams) until SERVICE_SHUTDOWN__DEADLINE_MS
  // after the signal, cuts what is left, hands what it still holds back to the queue (a peer takes it at once),
  // marks itself stopped and exits.
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    const { drainDelayMs, quietMs, deadlineMs } = config.shutdown
    logger.info({ signal, drain_delay_ms: drainDelayMs, quiet_ms: quietMs, deadline_ms: deadlineMs }, 'shutting down: not ready, draining')
    // Backstop: whatever still hangs (a stuck close), the process leaves 10 s after the deadline.
    setTimeout(() => process.exit(1), deadlineMs + 10_000).unref()
    const current = hooks?.current() ?? gateway
    const draining = current.drain()
    await drainHttpServer(server, {
      delayMs: drainDelayMs,
      quietMs,
      // the balancer's checks go on after it has stopped sending: they are not traffic
      isProbe: (req) => req.url?.startsWith('/health') === true,
      deadlineMs,
      onNeverQuiet: () => logger.warn({ quiet_ms: quietMs }, 'requests were still arriving at the shutdown deadline: does the balancer check GET /health/ready?'),
      onDeadline: () => logger.warn({ deadline_ms: deadlineMs }, 'in-flight requests did not finish by the shutdown deadline; closing connections'),
    })
    await draining
    await hooks?.close()
    await current.close()
    logger.info('stopped')
    process.exit(0)
  }
  // Before the "listening" line: whoever reads it may signal at once, and until a handler exists a SIGTERM
  // kills the process outright (no shutdown).
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  await gateway.start()
  const port = (server.address() as AddressInfo).port
  recordGatewayPort(config.dataDir, port, `http://localhost:${port}`)
  logger.info({ port, publicOrigin: config.publicOrigin, database: gateway.services.dialect, profile: config.profile }, `gateway listening on http://localhost:${port}`)
}

void main()
