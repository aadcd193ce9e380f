import { createExpressServer } from '../shared/http/createExpressServer.js'
import { createLogger } from '../shared/logger.js'
import { createModelServer } from './app.js'
import { defaultThreads, exposureProblem, loadModelServerConfig } from './config.js'

/**
 * `npm run modelserver`: the Ollama-compatible model server on MODELSERVER_HOST:MODELSERVER_PORT, else OLLAMA_HOST
 * (127.0.0.1:11434).
 */
const logger = createLogger({ name: 'modelserver' })
const config = loadModelServerConfig()
config.threads ??= defaultThreads()
const refused = exposureProblem(config)
if (refused) {
  process.stderr.write(`model server: ${refused}\n`)
  process.exit(2)
}
let server: Awaited<ReturnType<typeof createModelServer>>
try {
  server = await createModelServer({ config, logger })
} catch (error) {
  // A weak or unreadable API key: the message says which and how to make one (it never contains the key).
  if (error instanceof Error && /^MODELSERVER_API_KEYS/.test(error.message)) {
    process.stderr.write(`model server: ${error.message}\n`)
    process.exit(2)
  }
  throw error
}
// Keys rotate without a restart: the file is re-read when it changes, and at once on SIGHUP.
process.on('SIGHUP', () => {
  server.apiKeys.reload()
  logger.info('API keys re-read')
})
const onListening = () => {
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  logger.info({ host: config.host, port, models: config.modelsDir, threads: config.threads }, 'model server listening')
}
// Requests and responses are born with Express's prototypes; idle connections kept 65 s (see createExpressServer).
const http = createExpressServer(server.app)
// An empty host (`OLLAMA_HOST=:11435`) listens on every interface, as Go's `:port` does.
if (config.host === '') http.listen(config.port, onListening)
else http.listen(config.port, config.host, onListening)
http.on('error', (error) => {
  logger.error({ err: error }, 'cannot listen')
  process.exit(1)
})

let stopping = false
async function stop(signal: string) {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'stopping')
  http.close()
  http.closeAllConnections()
  await server.close().catch((error) => logger.error({ err: error }, 'close failed'))
  process.exit(0)
}
process.on('SIGINT', () => void stop('SIGINT'))
process.on('SIGTERM', () => void stop('SIGTERM'))
