/**
 * Two gateway processes' worth of StorageService sharing one PostgreSQL database: 50 concurrent requests
 * carrying one payment payload, spread over both, settle once, record one deposit and one upload.
 */
import { randomBytes } from 'node:crypto'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import pg from 'pg'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { usdcArtifact } from '../../devnet/chains/startChain.js'
import { evmEnv, type EvmPeers, multipart, startEvmPeers, startAppGateway, type TestGateway } from './harness.js'

const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const name = `storage_it_${randomBytes(4).toString('hex')}`
let available = false
let peers: EvmPeers
let a: TestGateway
let b: TestGateway

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN, connectionTimeoutMillis: 2000 })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

beforeAll(async () => {
  try {
    await admin(`CREATE DATABASE ${name}`)
    available = true
  } catch (error) {
    // Outside CI a machine without PostgreSQL skips these; CI (.ci/run starts it) must never skip them.
    if (process.env.CI) throw error
    return
  }
  peers = await startEvmPeers()
  const env = { ...evmEnv(peers), SERVICE_DATABASE_URL: ADMIN.replace(/\/[^/]*$/, `/${name}`) }
  a = await startAppGateway(env, peers.dir)
  b = await startAppGateway(env, peers.dir)
}, 120_000)
afterAll(async () => {
  await a?.close()
  await b?.close()
  await peers?.close()
  if (available) await admin(`DROP DATABASE IF EXISTS ${name}`)
})

describe('paid storage on PostgreSQL, two services sharing the ledger', () => {
  it('50 concurrent requests with one payload over two services: one settlement, one deposit, one upload', async (t) => {
    if (!available) t.skip()
    const data = randomBytes(5000)
    const first = await fetch(`${a.url}/store`, { method: 'POST', body: multipart(data) })
    const pub = createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) })
    const client = new x402HTTPClient(
      new x402Client((_v, accepts) => accepts[0]!)
        .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(2).privateKey), pub)))
        .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: peers.base.tokenAddress }] }),
    )
    const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    const payload = await client.createPaymentPayload(required)
    const headers = client.encodePaymentSignatureHeader(payload)
    const balance = () => pub.readContract({ address: peers.base.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [anvilAccount(2).address] }) as Promise<bigint>
    const before = await balance()
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => fetch(`${(i % 2 ? a : b).url}/store`, { method: 'POST', body: multipart(data), headers }).then((r) => r.status)),
    )
    expect(replies.filter((s) => s === 200)).toHaveLength(1)
    expect(replies.filter((s) => s === 409)).toHaveLength(49)
    expect(before - (await balance())).toBe(BigInt(required.accepts[0]!.amount))
    const deposits = await a.ledger.db.selectFrom('storage_deposits').selectAll().execute()
    expect(deposits).toHaveLength(1)
    expect(deposits[0]!.status).toBe('settled')
    expect(await a.ledger.db.selectFrom('storage_uploads').selectAll().execute()).toHaveLength(1)
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(a?.validationErrors ?? []), ...(b?.validationErrors ?? [])]).toEqual([])
  })
})
