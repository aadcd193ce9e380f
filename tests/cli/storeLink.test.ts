/**
 * `store --gateway A --devnet B`: the link is B's Arweave gateway, so when A is not B's gateway (paid at another
 * address than B's service) the result says the link may not hold the bytes, in words and in `--json`. A stand-in
 * gateway answers the quote (`GET /store/quote`: 200 with the requirements) and the paid upload (an EVM payment is signed offline: no chain is needed).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { EXIT } from '../../src/cli/CliError.js'
import { runCliInProcess as cli } from '../support/runCliInProcess.js'

const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
/** Where the stand-in gateway asks to be paid (its own service address). */
const GATEWAY_PAY_TO = anvilAccount(7).address
const AR_TX_ID = 'Q5Ugu0gC3vn-8z0W1JHRJKRrBxnBD0wpr3v9aLQXk6M'
const DEVNET_ARWEAVE = 'http://127.0.0.1:9404'
/** The stand-in gateway's receipt of AR_TX_ID (not yet batched). */
const RECEIPT = {
  ar_tx_id: AR_TX_ID,
  ar_tx_id_bytes32: `0x${'ab'.repeat(32)}`,
  payer: anvilAccount(2).address,
  network: 'eip155:8453',
  asset: BASE_USDC,
  currency: 'USDC',
  size_bytes: 5,
  paid_atomics: '5012',
  sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
  stored_at: 1_764_000_000,
  chain_id: 8453,
  contract: null,
  commit_tx: null,
  batch: null,
}

let server: Server
let gateway: string
let dir: string
let file: string

function standInGateway(): Server {
  return createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.method === 'GET' && req.url === `/store/receipts/${AR_TX_ID}`) {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(JSON.stringify(RECEIPT))
      }
      if (req.method === 'GET' && req.url?.startsWith('/store/quote')) {
        const required = {
          x402Version: 2,
          error: null,
          resource: { url: `${gateway}/store`, description: 'Permanent storage', mimeType: 'application/octet-stream' },
          accepts: [{ scheme: 'exact', network: 'eip155:8453', asset: BASE_USDC, amount: '5012', payTo: GATEWAY_PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' } }],
        }
        res.writeHead(200, { 'content-type': 'application/json', 'payment-required': Buffer.from(JSON.stringify(required)).toString('base64') })
        return res.end(JSON.stringify(required))
      }
      if (req.method === 'POST' && req.url === '/store' && req.headers['payment-signature']) {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(JSON.stringify({ arTxId: AR_TX_ID, sha256: '0'.repeat(64), sizeBytes: 5, winc: null, settlement: { success: true, transaction: `0x${'1'.repeat(64)}`, network: 'eip155:8453', payer: anvilAccount(2).address } }))
      }
      res.writeHead(404).end()
    })
  })
}

/** A devnet.json as `npm start` writes it, for the parts `store` reads: its payer, its Arweave gateway, its service. */
async function devnetFile(name: string, service: Record<string, string> | undefined, arweave = DEVNET_ARWEAVE): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, JSON.stringify({ accounts: { evm: [{ role: 'payer', privateKey: anvilAccount(2).privateKey }] }, storage: { gatewayUrl: arweave }, ...(service ? { service } : {}) }))
  return path
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-link-'))
  file = join(dir, 'hello.txt')
  await writeFile(file, 'hello')
  server = standInGateway()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  gateway = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  await rm(dir, { recursive: true, force: true })
})

describe('store --devnet with a --gateway of another system', () => {
  it("warns that the link is the devnet's Arweave gateway and the gateway paid is not that devnet's", async () => {
    const other = await devnetFile('other-devnet.json', { payToEvm: anvilAccount(6).address, payToAlgorand: 'ALGOSERVICEADDRESS' })
    const json = await cli(['store', file, '--gateway', gateway, '--devnet', other, '--json'])
    expect(json.code, json.out + json.err).toBe(EXIT.ok)
    expect(json.json.arweaveUrl).toBe(`${DEVNET_ARWEAVE}/${AR_TX_ID}`)
    expect(json.json.warning).toBe(
      `${gateway} is not the gateway of devnet ${other} (it is paid at ${GATEWAY_PAY_TO}, that devnet's gateway at ${anvilAccount(6).address} or ALGOSERVICEADDRESS): ` +
        `the link is that devnet's Arweave gateway ${DEVNET_ARWEAVE}, which is likely not where ${gateway} stored it — pass --arweave with the Arweave gateway ${gateway} stores to (verify needs it too)`,
    )
    const human = await cli(['store', file, '--gateway', gateway, '--devnet', other])
    expect(human.code).toBe(EXIT.ok)
    expect(human.out).toContain(`\nlink         ${DEVNET_ARWEAVE}/${AR_TX_ID}\nwarning      ${gateway} is not the gateway of devnet ${other} `)
  })

  it("says nothing when the gateway is the devnet's (same service address, any letter case), when --arweave names the link's gateway, or when the devnet file names no service", async () => {
    const same = await devnetFile('same-devnet.json', { payToEvm: GATEWAY_PAY_TO.toLowerCase() })
    const r = await cli(['store', file, '--gateway', gateway, '--devnet', same, '--json'])
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json.arweaveUrl).toBe(`${DEVNET_ARWEAVE}/${AR_TX_ID}`)
    expect(r.json).not.toHaveProperty('warning')

    const other = await devnetFile('other-again.json', { payToEvm: anvilAccount(6).address })
    const chosen = await cli(['store', file, '--gateway', gateway, '--devnet', other, '--arweave', 'http://127.0.0.1:7404', '--json'])
    expect(chosen.json.arweaveUrl).toBe(`http://127.0.0.1:7404/${AR_TX_ID}`)
    expect(chosen.json).not.toHaveProperty('warning')

    const handWritten = await devnetFile('hand-written.json', undefined)
    const plain = await cli(['store', file, '--gateway', gateway, '--devnet', handWritten, '--json'])
    expect(plain.json).not.toHaveProperty('warning')
  })
})

describe('verify --devnet with a --gateway of another system', () => {
  it("adds to the devnet Arweave gateway's 404 that the gateway is not that devnet's, and only then", async () => {
    // The stand-in gateway answers 404 to every other path: it plays the devnet's Arweave gateway too, which lacks the item.
    const other = await devnetFile('verify-other.json', { payToEvm: anvilAccount(6).address }, `${gateway}/arweave`)
    const r = await cli(['verify', AR_TX_ID, '--gateway', gateway, '--devnet', other, '--json'])
    expect(r.code, r.out + r.err).toBe(EXIT.notFound)
    expect(r.out + r.err).toContain(`Arweave gateway GET /${AR_TX_ID} answered 404`)
    expect(r.out + r.err).toContain(`${gateway} is not the gateway of devnet ${other}`)
    expect(r.out + r.err).toContain('pass --arweave')

    const same = await devnetFile('verify-same.json', { payToEvm: GATEWAY_PAY_TO }, `${gateway}/arweave`)
    const own = await cli(['verify', AR_TX_ID, '--gateway', gateway, '--devnet', same, '--json'])
    expect(own.code).toBe(EXIT.notFound)
    expect(own.out + own.err).toContain('answered 404')
    expect(own.out + own.err).not.toContain('is not the gateway of devnet')
  })
})
