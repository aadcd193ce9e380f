import { mkdtemp, rm } from 'node:fs/promises'
import type { Server } from 'node:http'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { ResponseValidationMode, ResponseValidationReport } from '../../src/shared/http/index.js'
import type { Logger } from '../../src/shared/logger.js'
import { createModelServer, type ModelServer } from '../../src/modelserver/app.js'
import { loadModelServerConfig, type ModelServerConfig } from '../../src/modelserver/config.js'
import { createExpressServer } from '../../src/shared/http/createExpressServer.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import type { HostResolver } from '../../src/modelserver/registry/RegistryEgress.js'

export type TestModelServer = {
  url: string
  port: number
  server: ModelServer
  /** Responses that did not match openapi/modelserver.yaml. */
  mismatches: ResponseValidationReport[]
  close(): Promise<void>
}

/** Starts a model server on a free port with its own temporary models directory (tests, benchmarks). */
export async function startTestModelServer(params: {
  engine: Engine
  config?: Partial<ModelServerConfig>
  /** Default `error` (tests); benchmarks use `warn` as `npm run modelserver` does. */
  responseValidation?: ResponseValidationMode
  /** Where the server logs (tests capture it to check what reaches the log and what the client). */
  logger?: Logger
  /** How registry names resolve; tests pass a stub so that none asks real DNS. */
  resolveHost?: HostResolver
  /** With `config.tracing.enabled`: where the spans go (an in-memory exporter). */
  spanExporter?: SpanExporter
}): Promise<TestModelServer> {
  const modelsDir = params.config?.modelsDir ?? (await mkdtemp(path.join(os.tmpdir(), 'modelserver-')))
  const ownsDir = params.config?.modelsDir === undefined
  const config: ModelServerConfig = { ...loadModelServerConfig({}), modelsDir, threads: 1, ...params.config }
  const mismatches: ResponseValidationReport[] = []
  const server = await createModelServer({
    config,
    engine: params.engine,
    logger: params.logger,
    resolveHost: params.resolveHost,
    responseValidation: params.responseValidation ?? 'error',
    onResponseValidationError: (r) => mismatches.push(r),
    processMetrics: false,
    spanExporter: params.spanExporter,
  })
  const http: Server = createExpressServer(server.app).listen(0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    http.once('listening', resolve)
    http.once('error', reject)
  })
  const port = (http.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    mismatches,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
      await server.close()
      if (ownsDir) await rm(modelsDir, { recursive: true, force: true })
    },
  }
}
