/**
 * `GET /health/ready` reports each capability and is not ready while a configured one is down: the whole gateway
 * in process (default domains, responses checked against the document), its model server and a chain's JSON-RPC
 * endpoint small servers the test turns off and on. Paid storage is left unset here: reported `not_configured`, it
 * never holds readiness back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../support/listen.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { type SwitchableModelServer, startSwitchableModelServer } from '../support/switchableModelServer.js'
import { waitFor } from '../support/waitFor.js'

let modelServer: SwitchableModelServer
let gw: TestGateway
/** A chain's JSON-RPC endpoint (here only `eth_chainId`), which the test turns off. */
let chainUp = true
let chain: Listening

beforeAll(async () => {
  modelServer = await startSwitchableModelServer()
  chain = await listen((_req, res) => {
    if (!chainUp) return void res.writeHead(502).end()
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x2105"}')
  })
  gw = await startTestGateway({
    modelServerUrl: modelServer.url,
    // a chain configured for the recovery of x402 payments: the `chains` capability
    env: { SERVICE_HEALTH__CHECK_INTERVAL_MS: '100', SERVICE_HEALTH__CHECK_TIMEOUT_MS: '1000', SERVICE_X402__RPC_URL__EIP155_8453: chain.url },
  })
  await gw.gateway.start()
})

afterAll(async () => {
  await gw?.close()
  await modelServer?.close()
  await chain?.close()
})

const ready = async (query = '') => {
  const res = await fetch(`${gw.url}/health/ready${query}`)
  return { status: res.status, body: (await res.json()) as { status: string; capabilities?: Record<string, string> } }
}

describe('GET /health/ready', () => {
  it('is ready with every configured capability up, and says which are not configured', async () => {
    const answer = await waitFor('ready', async () => {
      const r = await ready()
      return r.status === 200 ? r : undefined
    }, 20_000, () => ready())
    expect(answer.body).toEqual({
      status: 'ready',
      capabilities: {
        database: 'up',
        catalogue_log: 'up',
        modelserver: 'up',
        storage: 'not_configured',
        facilitator: 'not_configured',
        algorand: 'not_configured',
        chains: 'up',
      },
    })
  })

  it('is 503 not_ready while the model server is down, naming it; ready again once it is back', async () => {
    modelServer.up = false
    const down = await waitFor('the model server seen down', async () => {
      const r = await ready()
      return r.status === 503 ? r : undefined
    }, 20_000, () => ready())
    expect(down.body).toMatchObject({ status: 'not_ready', capabilities: { modelserver: 'down', database: 'up', storage: 'not_configured' } })
    expect(gw.logText()).toMatch(/modelserver is down: GET \/health\/ready answers 503/)
    // a probe that requires only what it names, or only the replica's own phase
    expect(await ready('?require=none')).toMatchObject({ status: 200, body: { status: 'ready', capabilities: { modelserver: 'down' } } })
    expect((await ready('?require=database,storage')).status).toBe(200)
    expect((await ready('?require=database,modelserver')).status).toBe(503)
    const typo = await fetch(`${gw.url}/health/ready?require=modelservr`)
    expect(typo.status).toBe(400)
    expect(await typo.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('modelservr') })
    modelServer.up = true
    await waitFor('ready again', async () => ((await ready()).status === 200 ? true : undefined), 20_000, () => ready())
    expect(gw.validationErrors).toEqual([])
  })

  it('is 503 not_ready while a configured chain does not answer', async () => {
    chainUp = false
    const down = await waitFor('the chain seen down', async () => {
      const r = await ready()
      return r.status === 503 ? r : undefined
    }, 20_000, () => ready())
    expect(down.body).toMatchObject({ status: 'not_ready', capabilities: { chains: 'down', modelserver: 'up' } })
    chainUp = true
    await waitFor('ready again', async () => ((await ready()).status === 200 ? true : undefined), 20_000, () => ready())
  })

  it('is draining from the stop signal on, whatever it requires', async () => {
    await gw.gateway.drain()
    expect(await ready('?require=none')).toMatchObject({ status: 503, body: { status: 'draining' } })
    expect(gw.validationErrors).toEqual([])
  })
})
