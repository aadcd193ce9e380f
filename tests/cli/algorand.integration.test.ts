/**
 * `pay2store store --rail algorand` against the devnet's algod peer and the real gateway app: the CLI reads
 * the 402, sends the USDC ASA payment with the request binding as its note, and the gateway verifies it on
 * the node before storing. Failures: a payer holding no USDC (exit 5), the node down (3), a malformed
 * mnemonic (2), no key at all (4). The gateway gone once the payment was made (the money moves before the
 * upload on this rail): exit 8 naming the transaction, never "cannot reach … is the gateway running?".
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import algosdk from 'algosdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { startAlgod, type AlgodPeer } from '../../devnet/algod/startAlgod.js'
import { EXIT } from '../../src/cli/CliError.js'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers, type TestGateway } from '../storage/harness.js'
import { runCliInProcess } from '../support/runCliInProcess.js'

const TOKEN = 'c'.repeat(64)
const DOWN = 'http://127.0.0.1:1'
const MNEMONIC_ENV = 'PAY2STORE_TEST_ALGORAND_MNEMONIC'
const TOKEN_ENV = 'PAY2STORE_TEST_ALGOD_TOKEN'
let peers: EvmPeers
let node: AlgodPeer
let gw: TestGateway
let dir: string
const service = algosdk.generateAccount()
const payer = algoTestAccount(1)
const devnetPayer = algoTestAccount(2)
/** Holds ALGO for fees but never opted in to the USDC ASA: it holds none. */
const poor = algosdk.generateAccount()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-algo-'))
  peers = await startEvmPeers()
  node = await startAlgod({
    token: TOKEN,
    roundIntervalMs: 200,
    assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: payer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: devnetPayer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
      { address: poor.addr.toString(), microAlgos: 10_000_000n },
    ],
  })
  const env: Record<string, string> = {
    ...evmEnv(peers),
    SERVICE_ALGOD__URL: node.url,
    SERVICE_ALGOD__TOKEN: TOKEN,
    SERVICE_X402__PAY_TO_ALGORAND: service.addr.toString(),
    SERVICE_ALGOD__POLL_INTERVAL_MS: '200',
    SERVICE_ALGOD__TIMEOUT_MS: '5000',
  }
  delete env.SERVICE_ALGOD__GENESIS_HASH // read from the node, as with npm start
  gw = await startAppGateway(env, peers.dir)
}, 180_000)
afterAll(async () => {
  await gw?.close()
  await node?.close()
  await peers?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const cli = runCliInProcess

const usdcOf = async (address: string) => {
  const algod = new algosdk.Algodv2(TOKEN, node.url.replace(/:\d+$/, ''), new URL(node.url).port)
  return (await algod.accountAssetInformation(address, USDC_ASA_ID).do()).assetHolding?.amount ?? 0n
}

describe('pay2store store --rail algorand', () => {
  it('pays the USDC ASA on the node, the gateway stores the file; receipt and link printed', async () => {
    const data = randomBytes(40_000)
    const file = join(dir, 'algo.bin')
    await writeFile(file, data)
    const before = await usdcOf(service.addr.toString())
    const r = await cli(
      ['store', file, '--rail', 'algorand', '--gateway', gw.url, '--algod', node.url, '--algorand-key-env', MNEMONIC_ENV, '--algod-token-env', TOKEN_ENV, '--arweave', peers.arweave.url, '--json'],
      { [MNEMONIC_ENV]: payer.mnemonic, [TOKEN_ENV]: TOKEN },
    )
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json).toMatchObject({ sizeBytes: 40_000, network: `algorand:${node.genesisHash}`, asset: String(USDC_ASA_ID), payer: payer.address })
    expect(r.json.sha256).toBe(createHash('sha256').update(data).digest('hex'))
    expect(r.json.receipt.settlement).toMatchObject({ payer: payer.address, asset: String(USDC_ASA_ID), amount: r.json.amountAtomic })
    // the money moved on the node, and the bytes are on the Arweave gateway under the printed link
    expect(await usdcOf(service.addr.toString())).toBe(before + BigInt(r.json.amountAtomic))
    const back = await fetch(r.json.arweaveUrl)
    expect(Buffer.from(await back.arrayBuffer()).equals(data)).toBe(true)
  })

  it('with --devnet <file>: the payer and the node come from devnet.json; human output', async () => {
    const devnet = join(dir, 'devnet.json')
    await writeFile(devnet, JSON.stringify({ algorand: { url: node.url, token: TOKEN }, accounts: { algorand: [{ role: 'payer', address: devnetPayer.address, mnemonic: devnetPayer.mnemonic }] } }))
    const file = join(dir, 'devnet.bin')
    await writeFile(file, randomBytes(3_000))
    const r = await cli(['store', file, '--rail', 'algorand', '--devnet', devnet, '--gateway', gw.url, '--arweave', peers.arweave.url])
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.out).toMatch(new RegExp(`^paying 0\\.\\d+ USDC \\(ASA ${USDC_ASA_ID}\\) on algorand from ${devnetPayer.address}\\n`))
    expect(r.out).toMatch(new RegExp(`\nstored ${file} \\(3000 bytes\\)\nstorage id   [A-Za-z0-9_-]{43}\n`))
  })

  it('failures: no USDC is 5, the node down is 3, a malformed mnemonic is 2, no key is 4 — nothing stored', async () => {
    const file = join(dir, 'fail.bin')
    await writeFile(file, randomBytes(2_000))
    const args = ['store', file, '--rail', 'algorand', '--gateway', gw.url, '--algorand-key-env', MNEMONIC_ENV, '--algod-token-env', TOKEN_ENV, '--json']
    const stored = async () => (await gw.ledger.db.selectFrom('storage_uploads').selectAll().execute()).length
    const count = await stored()

    const broke = await cli([...args, '--algod', node.url], { [MNEMONIC_ENV]: algosdk.secretKeyToMnemonic(poor.sk), [TOKEN_ENV]: TOKEN })
    expect(broke.code, broke.out).toBe(EXIT.insufficientFunds)
    expect(broke.json.error).toBe('insufficient_funds')
    expect(broke.json.message).toContain(String(USDC_ASA_ID))

    const down = await cli([...args, '--algod', DOWN], { [MNEMONIC_ENV]: payer.mnemonic, [TOKEN_ENV]: TOKEN })
    expect(down.code, down.out).toBe(EXIT.unreachable)
    expect(down.json.error).toBe('server_unreachable')

    const bad = await cli([...args, '--algod', node.url], { [MNEMONIC_ENV]: 'not a mnemonic', [TOKEN_ENV]: TOKEN })
    expect(bad.code).toBe(EXIT.usage)
    expect(bad.json.error).toBe('bad_key')
    expect(bad.out).not.toContain('not a mnemonic')

    const none = await cli([...args, '--algod', node.url, '--algorand-key-env', 'PAY2STORE_UNSET_MNEMONIC'])
    expect(none.code).toBe(EXIT.notPayable)
    expect(none.json.error).toBe('no_key')
    expect(await stored()).toBe(count)
  })

  it('the gateway gone after the payment was made: exit 8 saying the payment may have been made and naming its transaction, not "is the gateway running?"', async () => {
    // answers the quote (the real gateway's) and stops listening: the paid upload, after the payment, finds nobody
    const front: Server = createServer((req, res) => {
      void (async () => {
        const quote = await fetch(`${gw.url}${req.url}`)
        const required = quote.headers.get('payment-required')
        res.writeHead(quote.status, { 'content-type': 'application/json', connection: 'close', ...(required ? { 'payment-required': required } : {}) })
        res.end(Buffer.from(await quote.arrayBuffer()))
        front.close()
      })()
    })
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`
    const file = join(dir, 'gone.bin')
    await writeFile(file, randomBytes(2_000))
    const before = await usdcOf(service.addr.toString())
    const r = await cli(
      ['store', file, '--rail', 'algorand', '--gateway', url, '--algod', node.url, '--algorand-key-env', MNEMONIC_ENV, '--algod-token-env', TOKEN_ENV, '--paid-retry', '2'],
      { [MNEMONIC_ENV]: payer.mnemonic, [TOKEN_ENV]: TOKEN },
    )
    expect(r.code, r.out + r.err).toBe(EXIT.paymentUnknown)
    const line = r.err.trim()
    expect(line).not.toMatch(/is the gateway running|npm start/)
    expect(line).toMatch(new RegExp(`^pay2store: the payment was made, but ${url}/store could not be reached \\(connection refused\\)`))
    expect(line).toContain('do not store the file again (that would pay again)')
    expect(line).toMatch(/its payment is Algorand transaction [A-Z2-7]{52}/)
    // the money did move
    expect(await usdcOf(service.addr.toString())).toBeGreaterThan(before)
  })
})
