import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type RequestHandler } from 'express'
import { afterEach, describe, expect, it } from 'vitest'
import { createExpressServer } from './createExpressServer.js'
import { createPipelineApp } from './createPipelineApp.js'

const servers: Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()))
})

async function serve(server: Server) {
  servers.push(server)
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  else await new Promise<void>((resolve) => (server.address() ? resolve() : server.once('listening', () => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function pipelineApp() {
  const failures: unknown[] = []
  const files = express.Router()
  files.get('/assets/file', (req, res) => void res.json({ baseUrl: req.baseUrl, path: req.path }))
  const pipeline: RequestHandler = (req, res, next) => {
    if (req.path.startsWith('/assets')) return files(req, res, next)
    if (req.path === '/boom') throw new Error('boom')
    if (req.path === '/reject') return Promise.reject(new Error('reject')) as never
    if (req.path === '/pass') return next()
    res.locals.seen = true
    res.status(200).json({ ip: req.ip, q: req.query.q ?? null, app: req.app.get('answer'), locals: res.locals.seen, url: req.originalUrl })
  }
  const app = createPipelineApp(pipeline, {
    configure: (settings) => {
      settings.disable('x-powered-by')
      settings.set('trust proxy', true)
      settings.set('answer', 42)
    },
    fallback: (_req, res, error) => {
      failures.push(error instanceof Error ? error.message : error)
      res.status(error ? 500 : 404).json({ error: error ? 'internal_error' : 'not_found' })
    },
  })
  // A route added to the app is never reached: the pipeline is the whole app.
  app.get('/express-route', (_req, res) => void res.send('router'))
  return { app, failures }
}

describe('createPipelineApp', () => {
  it.each([
    ['createExpressServer', (app: express.Express) => createExpressServer(app)],
    ['http.createServer', (app: express.Express) => createServer(app)],
    ['app.listen', (app: express.Express) => app.listen(0, '127.0.0.1')],
  ])('serves the pipeline with Express request and response behaviour and the app settings (%s)', async (_name, make) => {
    const { app, failures } = pipelineApp()
    const base = await serve(make(app))
    const r = await fetch(`${base}/hello?q=1`, { headers: { 'x-forwarded-for': '203.0.113.9' } })
    expect(r.status).toBe(200)
    expect(r.headers.get('x-powered-by')).toBeNull()
    expect(await r.json()).toEqual({ ip: '203.0.113.9', q: '1', app: 42, locals: true, url: '/hello?q=1' })
    expect(await (await fetch(`${base}/assets/file`)).json()).toEqual({ baseUrl: '', path: '/assets/file' })
    const route = await fetch(`${base}/express-route`)
    expect(await route.json()).toMatchObject({ url: '/express-route' })
    expect(failures).toEqual([])
  })

  it('gives a thrown error, a rejection and a request passed on to the fallback, in the API shape', async () => {
    const { app, failures } = pipelineApp()
    const base = await serve(createExpressServer(app))
    expect(await (await fetch(`${base}/boom`)).json()).toEqual({ error: 'internal_error' })
    expect(await (await fetch(`${base}/reject`)).json()).toEqual({ error: 'internal_error' })
    expect((await fetch(`${base}/pass`)).status).toBe(404)
    expect(failures).toEqual(['boom', 'reject', undefined])
  })

  it("replaces nothing of Express: the app's dispatcher and prototypes are Express's own", () => {
    const { app } = pipelineApp()
    const underlying = Object.getPrototypeOf(app) as express.Express
    // `handle` is Express's private dispatcher (not in its typings): still the one Express gave the app.
    const dispatcher = (o: object) => (o as { handle?: unknown }).handle
    expect(dispatcher(underlying)).toBe(dispatcher(express.application))
    expect(Object.hasOwn(app, 'handle')).toBe(false)
    expect(Object.getPrototypeOf(underlying.request)).toBe(express.request)
    expect(Object.getPrototypeOf(underlying.response)).toBe(express.response)
  })
})
