/**
 * Test harness: the shadow handlers behind the real OpenAPI router (`openapi/gateway.yaml`, request and
 * response validation on) in a small Express app — independent of the full gateway so the tier can be
 * tested over HTTP on its own. Records every response, log line and catalogue event for the leak sweep.
 */
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import express from 'express'
import { createDatabase } from '../../src/db/createDatabase.js'
import { createCapturingLogger } from './createCapturingLogger.js'
import { createOpenApiRouter, loadOpenApiDocument, type ResponseValidationReport } from '../../src/shared/http/index.js'
import { CollectingEventSink } from './shadowFixtures.js'
import { gatewayCatalogue } from '../../src/handlers/plugins.js'
import type { CoreServices, Handler, HandlerContext, Services } from '../../src/handlers/types.js'
import { shadowHandlers } from '../../src/handlers/shadow/shadowHandlers.js'
import { initShadow as shadowInit } from '../../src/handlers/shadow/index.js'

export type ShadowTestApp = {
  url: string
  events: CollectingEventSink
  logText: () => string
  responses: { operationId: string | undefined; status: number; body: string }[]
  validationErrors: ResponseValidationReport[]
  services: Services
  close: () => Promise<void>
}

const documentPath = fileURLToPath(new URL('../../openapi/gateway.yaml', import.meta.url))

export async function startShadowTestApp(p: { env: Record<string, string>; dataDir: string; publicOrigin?: string; now?: () => number; events?: CollectingEventSink }): Promise<ShadowTestApp> {
  const events = p.events ?? new CollectingEventSink()
  const { logger, text } = createCapturingLogger({ name: 'shadow-test' })
  // the admin tier lives in the database: a SQLite file in the data dir, so a restart on the same dir keeps it
  const database = await createDatabase({ url: `sqlite:${join(p.dataDir, 'gateway.sqlite')}` })
  const core = {
    config: { dataDir: p.dataDir, publicOrigin: p.publicOrigin ?? 'http://gw.test' },
    db: database.db,
    dialect: 'sqlite',
    changeFeed: database.changeFeed,
    logger,
    now: p.now ?? (() => Math.floor(Date.now() / 1000)),
    catalogue: events,
    databaseUrl: 'sqlite::memory:',
    env: p.env,
  } as unknown as CoreServices
  const setup = await Promise.resolve(shadowInit(core)).catch(async (error: unknown) => {
    await database.close()
    throw error
  })
  const services = { ...core, ...setup.services, errors: gatewayCatalogue } as unknown as Services
  const responses: ShadowTestApp['responses'] = []
  const validationErrors: ResponseValidationReport[] = []
  const withServices = (h: Handler) => (ctx: unknown) => h({ ...(ctx as HandlerContext), services })
  const router = createOpenApiRouter({
    document: loadOpenApiDocument(documentPath),
    handlers: Object.fromEntries(Object.entries(shadowHandlers).map(([id, h]) => [id, withServices(h)])),
    securityHandlers: Object.fromEntries(
      Object.entries(setup.securityHandlers ?? {}).map(([name, fn]) => [name, (ctx: unknown) => fn({ ...(ctx as HandlerContext), services })]),
    ),
    unauthorized: (ctx) => {
      const first = ctx.operation.security.flatMap((r) => Object.keys(r))[0]
      const fn = first ? setup.unauthorized?.[first] : undefined
      return fn ? fn({ ...(ctx as HandlerContext), services }) : { status: 401, body: { error: 'unauthorized', message: 'unauthorized' } }
    },
    mapError: (error) => {
      const mapped = gatewayCatalogue.toResult(error)
      if (mapped) return mapped
      logger.error({ err: error }, 'unhandled error')
      return { status: 500, body: { error: 'internal_error', message: 'Internal error.' } }
    },
    responseValidation: 'error',
    onResponseValidationError: (r) => validationErrors.push(r),
    logger,
  })
  const app = express()
  app.use((req, res, next) => {
    const chunks: Buffer[] = []
    const write = res.write.bind(res)
    const end = res.end.bind(res)
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk) chunks.push(Buffer.from(chunk as Buffer))
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest)
    }) as typeof res.write
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as Buffer))
      responses.push({ operationId: router.matchOperation(req.method, req.path)?.operationId, status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') })
      return (end as (...a: unknown[]) => typeof res)(chunk, ...rest)
    }) as typeof res.end
    next()
  })
  app.use(router.handler)
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    logText: text,
    responses,
    validationErrors,
    services,
    close: () => (closing ??= (async () => {
      server.close()
      await setup.close?.()
      await database.close()
    })()),
  }
}
