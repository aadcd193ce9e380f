import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import { corsStage } from './corsStage.js'

describe('corsStage', () => {
  let server: Listening
  let reached = 0
  beforeAll(async () => {
    const app = express()
    app.use(corsStage({ origins: ['https://app.example'] }))
    app.use((_req, res) => {
      reached++
      res.json({ ok: true })
    })
    server = await listen(app)
  })
  afterAll(() => server.close())

  it('answers a preflight itself, with the API headers allowed, without reaching later stages', async () => {
    const before = reached
    const res = await fetch(`${server.url}/agents`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-session-token' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    expect(res.headers.get('access-control-allow-headers')).toContain('X-Session-Token')
    expect(reached).toBe(before)
  })

  it('exposes the x402 and Retry-After headers to an allowed origin and nothing to another', async () => {
    const allowed = await fetch(`${server.url}/health`, { headers: { origin: 'https://app.example' } })
    expect(allowed.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED')
    expect(allowed.headers.get('access-control-expose-headers')).toContain('Retry-After')
    const other = await fetch(`${server.url}/health`, { headers: { origin: 'https://evil.example' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})
