import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'

// `/metrics` must not be public to the world. A scraper on the gateway's machine still reads it; a
// client elsewhere (here: behind one trusted proxy hop, its address in X-Forwarded-For) needs the metrics token.

const token = randomBytes(32).toString('hex')
let withToken: TestGateway
let withoutToken: TestGateway

beforeAll(async () => {
  withToken = await startTestGateway({ env: { SERVICE_TRUST_PROXY: '1', SERVICE_METRICS__TOKEN: token } })
  withoutToken = await startTestGateway({ env: { SERVICE_TRUST_PROXY: '1' } })
})

afterAll(async () => {
  await withToken?.close()
  await withoutToken?.close()
})

const scrape = (gw: TestGateway, headers: Record<string, string> = {}) => fetch(`${gw.url}/metrics`, { headers })
const remote = { 'x-forwarded-for': '203.0.113.9' }

describe('/metrics: loopback, or the metrics token', () => {
  it('a scraper on this machine reads it without a token, as before', async () => {
    const answer = await scrape(withoutToken)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toMatch(/# TYPE http_requests_total counter/)
  })

  it('off loopback without a token: 401 metrics_token_required, no metric in the body', async () => {
    const answer = await scrape(withToken, remote)
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="metrics"')
    const text = await answer.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'metrics_token_required' })
    expect(text).not.toMatch(/http_requests_total/)
  })

  it('off loopback with a wrong token: 401 metrics_token_invalid; with the right one: the metrics', async () => {
    const wrong = await scrape(withToken, { ...remote, authorization: `Bearer ${randomBytes(32).toString('hex')}` })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toMatchObject({ error: 'metrics_token_invalid' })
    const right = await scrape(withToken, { ...remote, authorization: `Bearer ${token}` })
    expect(right.status).toBe(200)
    expect(await right.text()).toMatch(/# TYPE http_requests_total counter/)
  })

  it('no token configured: off loopback nobody reads it, whatever bearer they send', async () => {
    const answer = await scrape(withoutToken, { ...remote, authorization: `Bearer ${token}` })
    expect(answer.status).toBe(401)
    expect(await answer.json()).toMatchObject({ error: 'metrics_token_required', message: expect.stringMatching(/loopback only/) })
  })

  it('every response matched the document', () => {
    expect(withToken.validationErrors).toEqual([])
    expect(withoutToken.validationErrors).toEqual([])
  })
})
