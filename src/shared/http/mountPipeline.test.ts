import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type RequestHandler } from 'express'
import { afterEach, describe, expect, it } from 'vitest'
import { createExpressServer } from './createExpressServer.js'
import { mountPipeline } from './mountPipeline.js'

describe('mountPipeline', () => {
  const servers: Server[] = []
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()))
  })

  async function serve(server: Server) {
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** A pipeline using what stages use of Express: getters, helpers, locals, a nested router with a mount path. */
  function appWithPipeline() {
    const app = express()
    app.disable('x-powered-by')
    app.set('trust proxy', true)
    const failures: unknown[] = []
    const files = express.Router()
    files.get('/file', (req, res) => void res.json({ baseUrl: req.baseUrl, path: req.path, originalUrl: req.originalUrl }))
    const nested = express.Router()
    nested.use('/assets', files)
    const pipeline: RequestHandler = (req, res, next) => {
      res.locals.seen = true
      if (req.path.startsWith('/assets')) return nested(req, res, next)
      if (req.path === '/boom') throw new Error('boom')
      if (req.path === '/pass') return next()
      res.status(200).json({ ip: req.ip, q: req.query.q ?? null, app: req.app === app, locals: res.locals.seen, url: req.originalUrl })
    }
    mountPipeline(app, pipeline, {
      fallback: (_req, res, error) => {
        failures.push(error)
        res.status(error ? 500 : 404).json({ error: error ? 'internal_error' : 'not_found' })
      },
    })
    // Routes of Express's own router are never reached: the pipeline is the whole app.
    app.get('/express-route', (_req, res) => void res.send('router'))
    return { app, failures }
  }

  it.each([
    ['createExpressServer', (app: express.Express) => createExpressServer(app)],
    ['http.createServer (supertest, app.listen)', (app: express.Express) => createServer(app)],
  ])('serves the pipeline with Express request and response behaviour (%s)', async (_name, make) => {
    const { app, failures } = appWithPipeline()
    const base = await serve(make(app))
    const r = await fetch(`${base}/hello?q=1`, { headers: { 'x-forwarded-for': '203.0.113.9' } })
    expect(r.status).toBe(200)
    expect(r.headers.get('x-powered-by')).toBeNull()
    expect(await r.json()).toEqual({ ip: '203.0.113.9', q: '1', app: true, locals: true, url: '/hello?q=1' })
    expect(await (await fetch(`${base}/assets/file?x=2`)).json()).toEqual({ baseUrl: '/assets', path: '/file', originalUrl: '/assets/file?x=2' })
    expect((await fetch(`${base}/express-route`)).status).toBe(200) // answered by the pipeline, not the router
    expect(failures).toEqual([])
  })

  it('gives a thrown error and a request passed on to the fallback, in the API shape instead of HTML', async () => {
    const { app, failures } = appWithPipeline()
    const base = await serve(createExpressServer(app))
    const boom = await fetch(`${base}/boom`)
    expect([boom.status, await boom.json()]).toEqual([500, { error: 'internal_error' }])
    const pass = await fetch(`${base}/pass`)
    expect([pass.status, await pass.json()]).toEqual([404, { error: 'not_found' }])
    const nestedMiss = await fetch(`${base}/assets/none`)
    expect(nestedMiss.status).toBe(404)
    expect(failures.map((f) => (f instanceof Error ? f.message : f))).toEqual(['boom', undefined, undefined])
  })

  it("keeps Express's x-powered-by setting", async () => {
    const app = express()
    mountPipeline(app, (_req, res) => void res.end('ok'), { fallback: () => {} })
    const base = await serve(createExpressServer(app))
    expect((await fetch(base)).headers.get('x-powered-by')).toBe('Express')
  })
})
