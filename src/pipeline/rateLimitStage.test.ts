import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import type { UnroutedResult } from '../shared/http/index.js'
import { rateLimitStage } from './rateLimitStage.js'

describe('rateLimitStage', () => {
  let server: Listening
  const sent: UnroutedResult[] = []
  beforeAll(async () => {
    const app = express()
    app.use(
      rateLimitStage({
        windowS: 60,
        max: 2,
        matchOperation: () => undefined,
        send: async (_req, res, result) => {
          sent.push(result)
          res.statusCode = result.status
          for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v as string)
          res.setHeader('content-type', 'application/json')
          res.end(JSON.stringify(result.body))
        },
      }),
    )
    app.use((_req, res) => void res.json({ ok: true }))
    server = await listen(app)
  })
  afterAll(() => server.close())

  it('lets the limit through, then answers 429 with Retry-After in the Error shape', async () => {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${server.url}/health`)
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 429, 429])
    const retryAfter = Number(last!.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(await last!.json()).toEqual({
      error: 'rate_limited',
      message: `too many requests; retry after ${retryAfter} s`,
      details: { retry_after_s: retryAfter },
    })
    expect(sent.at(-1)?.component).toBe('Error')
  })
})
