/**
 * A platform without an Anvil binary (macOS and ARM users get Foundry's own builds; elsewhere there
 * are none): the devnet says so in one line and starts every other peer.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { foundryBinary } from './chains/foundryBinary.js'
import { devnetTable } from './devnetTable.js'
import { startDevnet, type Devnet, type DevnetInfo } from './startDevnet.js'

describe('startDevnet without an Anvil binary', () => {
  let dir: string
  let devnet: Devnet
  const lines: string[] = []
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'devnet-bsd-'))
    devnet = await startDevnet({
      dataDir: dir,
      ports: 'free',
      blockIntervalMs: 200,
      roundIntervalMs: 200,
      anvil: foundryBinary('anvil', 'freebsd', 'x64'),
      log: (l) => lines.push(l),
    })
  }, 90_000)
  afterAll(async () => {
    await devnet?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('says so in one line and starts no chain or facilitator', () => {
    const said = lines.filter((l) => /anvil|chain/i.test(l))
    expect(said).toEqual(['no anvil binary: Foundry publishes none for freebsd-x64; the EVM chains and the x402 facilitator are not started, the other peers are'])
    const info = JSON.parse(readFileSync(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo
    expect(info.evm).toBe(false)
    expect(info.chains).toEqual({})
    expect(info.facilitator).toBeUndefined()
    expect(info.env.SERVICE_X402__FACILITATOR_URL).toBeUndefined()
    expect(devnetTable(info)).toContain('no Anvil binary for this platform')
  })

  it('runs the Algorand node, the Arweave gateway and the storage upstream', async () => {
    const { algorand, storage } = devnet.info
    const status = await fetch(`${algorand.url}/v2/status`, { headers: { 'X-Algo-API-Token': algorand.token } })
    expect(status.status).toBe(200)
    const price = await fetch(`${storage.paymentUrl}/v1/price/bytes/1024`)
    expect(price.status).toBe(200)
    const info = await fetch(`${storage.gatewayUrl}/info`)
    expect(info.status).toBe(200)
    expect(devnet.info.env.SERVICE_ALGOD__URL).toBe(algorand.url)
  })
})
