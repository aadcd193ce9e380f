import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import { findRepoRoot } from '../config/findRepoRoot.js'
import { publicAssets } from './publicAssets.js'

describe('publicAssets', () => {
  let server: Listening
  beforeAll(async () => {
    const app = express()
    app.use(publicAssets(findRepoRoot()))
    app.use((req, res) => void res.status(418).json({ fellThrough: req.path }))
    server = await listen(app)
  })
  afterAll(() => server.close())

  it('serves the API documents as files', async () => {
    const res = await fetch(`${server.url}/doc/openapi/gateway.yaml`)
    expect(res.status).toBe(200)
    expect(await res.text()).toMatch(/^openapi: 3\.1/m)
  })

  it('lets anything that is not a file fall through to the router', async () => {
    const res = await fetch(`${server.url}/doc/openapi/nope.yaml`)
    expect(res.status).toBe(418)
    expect(await res.json()).toEqual({ fellThrough: '/doc/openapi/nope.yaml' })
  })

  it('serves under a prefix written in another case, as Express mount paths match', async () => {
    const res = await fetch(`${server.url}/DOC/openapi/gateway.yaml`)
    expect(res.status).toBe(200)
  })

  it('passes paths outside its prefixes straight on', async () => {
    const res = await fetch(`${server.url}/doc/openapix/gateway.yaml`)
    expect(res.status).toBe(418)
  })
})
