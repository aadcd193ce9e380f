import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterEach, describe, expect, it } from 'vitest'
import { createExpressServer } from './createExpressServer.js'

describe('createExpressServer', () => {
  const servers: { close: (cb: () => void) => void }[] = []
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()))
  })

  async function serve(app: express.Express, options = {}) {
    const server = createExpressServer(app, options)
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }

  it("creates requests and responses that already have the app's prototypes, before Express sees them", async () => {
    const app = express()
    app.get('/', (_req, res) => void res.json({ ok: true }))
    const { server, base } = await serve(app)
    const seen: { req: boolean; res: boolean }[] = []
    // Runs before the app (listeners fire in order): what Node built, not what Express made of it.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      seen.push({ req: Object.getPrototypeOf(req) === app.request, res: Object.getPrototypeOf(res) === app.response }),
    )
    expect(await (await fetch(base)).json()).toEqual({ ok: true })
    expect(seen).toEqual([{ req: true, res: true }])
  })

  it('serves Express exactly as http.createServer(app) does: request getters, response helpers, body parsing, errors', async () => {
    const app = express()
    app.set('trust proxy', true)
    app.use(express.json())
    app.post('/echo/:id', (req, res) => {
      res.set('x-seen', `${req.ip} ${req.protocol} ${req.hostname} ${req.params.id} ${String(req.query.q)} ${req.get('x-a')}`)
      res.status(201).json({ body: req.body as unknown, app: req.app === app, locals: typeof res.locals })
    })
    app.get('/redirect', (_req, res) => res.redirect('/there'))
    app.get('/boom', () => {
      throw new Error('boom')
    })
    const { base } = await serve(app, { maxHeaderSize: 16 * 1024 })
    const r = await fetch(`${base}/echo/7?q=x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9', 'x-a': 'b' },
      body: JSON.stringify({ n: 1 }),
    })
    expect(r.status).toBe(201)
    expect(r.headers.get('x-seen')).toBe('203.0.113.9 http 127.0.0.1 7 x b')
    expect(await r.json()).toEqual({ body: { n: 1 }, app: true, locals: 'object' })
    const redirect = await fetch(`${base}/redirect`, { redirect: 'manual' })
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, '/there'])
    expect((await fetch(`${base}/boom`)).status).toBe(500)
    expect((await fetch(`${base}/nothing`)).status).toBe(404)
  })

  it('passes the server options on (a header larger than maxHeaderSize is refused with 431)', async () => {
    const app = express()
    app.get('/', (_req, res) => void res.send('ok'))
    const { base } = await serve(app, { maxHeaderSize: 1024 })
    expect((await fetch(base, { headers: { 'x-big': 'y'.repeat(2000) } })).status).toBe(431)
    expect((await fetch(base)).status).toBe(200)
  })
})
