import express, { type ErrorRequestHandler, type RequestHandler } from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import { composeStages } from './composeStages.js'

const tag =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append('x-stages', name)
    next()
  }

describe('composeStages', () => {
  let server: Listening
  beforeAll(async () => {
    const app = express()
    app.use(
      composeStages(
        tag('cors'),
        tag('limit'),
        (req, res, next) => {
          if (req.path === '/answer') return void res.status(200).json({ answered: true })
          if (req.path === '/fail') return next(new Error('next(err)'))
          if (req.path === '/throw') throw new Error('thrown')
          if (req.path === '/reject') return Promise.reject(new Error('rejected')) as never
          next()
        },
        tag('router'),
      ),
    )
    app.use((_req, res) => void res.status(404).json({ after: true }))
    app.use(((error: Error, _req, res, _next) => void res.status(500).json({ error: error.message })) as ErrorRequestHandler)
    server = await listen(app)
  })
  afterAll(() => server.close())

  it('runs the stages in order; a stage that answers ends the request', async () => {
    const res = await fetch(`${server.url}/answer`)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-stages')).toBe('cors, limit')
  })

  it("continues after itself when the last stage calls next()", async () => {
    const res = await fetch(`${server.url}/other`)
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ after: true })
    expect(res.headers.get('x-stages')).toBe('cors, limit, router')
  })

  it.each([
    ['/fail', 'next(err)'],
    ['/throw', 'thrown'],
    ['/reject', 'rejected'],
  ])('hands %s to Express error handling, skipping the later stages', async (path, message) => {
    const res = await fetch(`${server.url}${path}`)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: message })
    expect(res.headers.get('x-stages')).toBe('cors, limit')
  })
})
