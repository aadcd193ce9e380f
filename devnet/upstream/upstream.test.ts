import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArweaveSigner, createData } from '@dha-team/arbundles'
import { createWalletClient, http, publicActions } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../accounts.js'
import { startArweaveGateway, type ArweaveGatewayPeer } from '../arweave/startArweaveGateway.js'
import { startChain, usdcArtifact, type LocalChain } from '../chains/startChain.js'
import { arweaveAddress, generateArweaveJwk, type ArweaveJwk } from '../testing/arweaveKey.js'
import { startUpstream, type UpstreamOptions, type UpstreamPeer } from './startUpstream.js'
import { priceBytes } from './pricing.js'

const deposit = '0x00000000000000000000000000000000000d3b05' as const

async function item(jwk: ArweaveJwk, data: Buffer | string, contentType = 'text/plain') {
  const signer = new ArweaveSigner(jwk)
  const di = createData(data, signer, { tags: [{ name: 'Content-Type', value: contentType }, { name: 'App-Name', value: 'devnet-test' }] })
  await di.sign(signer)
  return di
}

const post = (url: string, body: Uint8Array) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) })

describe('storage upstream + Arweave gateway peers', () => {
  let dir: string
  let base: LocalChain
  let up: UpstreamPeer
  let gw: ArweaveGatewayPeer
  let rich: ArweaveJwk
  let poor: ArweaveJwk
  let upOpts: UpstreamOptions

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'devnet-upstream-'))
    ;[base, rich, poor] = await Promise.all([startChain({ chainId: 8453 }), generateArweaveJwk(), generateArweaveJwk()])
    upOpts = {
      dataDir: dir,
      blockIntervalMs: 0, // blocks on demand in this suite
      prefund: { [arweaveAddress(rich)]: 10n ** 15n },
      funding: { depositAddress: deposit, currencies: { 'base-usdc': { chainId: 8453, rpcUrl: base.url, tokenAddress: base.tokenAddress } } },
    }
    up = await startUpstream(upOpts)
    gw = await startArweaveGateway({ dataDir: dir })
  }, 60_000)
  afterAll(async () => {
    await gw?.close()
    await up?.close()
    await base?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('quotes deterministic prices and rates', async () => {
    const p = (await (await fetch(`${up.url}/v1/price/bytes/1048576`)).json()) as { winc: string }
    expect(p.winc).toBe(priceBytes(up.pricing, 1048576n).toString())
    const r = (await (await fetch(`${up.url}/v1/rates`)).json()) as { winc: string; fiat: { usd: number } }
    expect(r.winc).toBe('2000000000000')
    expect(r.fiat.usd).toBe(10)
    expect((await fetch(`${up.url}/v1/balance/${arweaveAddress(poor)}`)).status).toBe(404)
    const b = (await (await fetch(`${up.url}/v1/balance/${arweaveAddress(rich)}`)).json()) as { winc: string }
    expect(b.winc).toBe((10n ** 15n).toString())
  })

  it('uploads via /tx and /v1/tx/arweave; bytes and status from the gateway (202 → 200, confirmations grow)', async () => {
    const a = await item(rich, Buffer.alloc(200_000, 7), 'application/x-test')
    const res = await post(`${up.url}/tx`, a.getRaw())
    expect(res.status).toBe(200)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({ id: a.id, owner: arweaveAddress(rich), version: '0.2.0' })
    expect(body.dataCaches).toBeInstanceOf(Array)
    expect(body.fastFinalityIndexes).toBeInstanceOf(Array)
    expect(typeof body.timestamp).toBe('number')
    expect(BigInt(body.winc as string)).toBe(priceBytes(up.pricing, BigInt(a.getRaw().length)))
    const bal = (await (await fetch(`${up.url}/v1/account/balance/arweave?address=${arweaveAddress(rich)}`)).json()) as { winc: string }
    expect(BigInt(bal.winc)).toBe(10n ** 15n - BigInt(body.winc as string))

    const b = await item(rich, 'via the Turbo SDK path')
    const res2 = await post(`${up.url}/v1/tx/arweave`, b.getRaw())
    expect(res2.status).toBe(200)
    expect(((await res2.json()) as { id: string; winc: string })).toMatchObject({ id: b.id, winc: '0' })

    expect((await post(`${up.url}/tx`, a.getRaw())).status).toBe(202) // already stored

    expect((await fetch(`${gw.url}/tx/${a.id}/status`)).status).toBe(202)
    const got = await fetch(`${gw.url}/${a.id}`)
    expect(got.status).toBe(200)
    expect(got.headers.get('content-type')).toBe('application/x-test')
    expect(Buffer.from(await got.arrayBuffer()).equals(Buffer.alloc(200_000, 7))).toBe(true)
    expect(await (await fetch(`${gw.url}/${b.id}`)).text()).toBe('via the Turbo SDK path')

    gw.mine()
    const s1 = (await (await fetch(`${gw.url}/tx/${a.id}/status`)).json()) as Record<string, number | string>
    expect(s1.number_of_confirmations).toBe(1)
    expect(typeof s1.block_indep_hash).toBe('string')
    gw.mine()
    const s2 = (await (await fetch(`${gw.url}/tx/${a.id}/status`)).json()) as Record<string, number>
    expect(s2).toMatchObject({ block_height: s1.block_height, number_of_confirmations: 2 })
    expect((await fetch(`${gw.url}/tx/${'A'.repeat(43)}/status`)).status).toBe(404)
    expect((await fetch(`${gw.url}/${'A'.repeat(43)}`)).status).toBe(404)
  })

  it('serves GraphQL metadata, ranges and HEAD like an Arweave gateway', async () => {
    const a = await item(rich, 'graph me', 'text/markdown')
    expect((await post(`${up.url}/v1/tx/arweave`, a.getRaw())).status).toBe(200)
    const gql = async (query: string, variables?: unknown) =>
      (await (await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) })).json()) as {
        data: Record<string, any>
        errors?: unknown[]
      }
    const q = 'query($id: ID!) { transaction(id: $id) { id owner { address key } data { size type } tags { name value } block { height id } bundledIn { id } } }'
    const r1 = await gql(q, { id: a.id })
    expect(r1.errors).toBeUndefined()
    expect(r1.data.transaction).toMatchObject({
      id: a.id,
      owner: { address: arweaveAddress(rich), key: rich.n },
      data: { size: '8', type: 'text/markdown' },
      tags: [{ name: 'Content-Type', value: 'text/markdown' }, { name: 'App-Name', value: 'devnet-test' }],
      block: null,
    })
    gw.mine()
    const r2 = await gql(q, { id: a.id })
    expect(r2.data.transaction.block.height).toBe(gw.store.height)
    expect(r2.data.transaction.bundledIn.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect((await gql('{ transaction(id: "nope") { id } }')).data.transaction).toBeNull()
    const list = await gql('{ transactions(tags: [{name: "Content-Type", values: ["text/markdown"]}], first: 5) { edges { node { id } } pageInfo { hasNextPage } } }')
    expect(list.data.transactions.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([a.id])
    expect((await gql('{ nope }')).errors).toBeDefined()

    const part = await fetch(`${gw.url}/${a.id}`, { headers: { range: 'bytes=2-4' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe('bytes 2-4/8')
    expect(await part.text()).toBe('aph')
    const head = await fetch(`${gw.url}/${a.id}`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe('8')
    expect((await fetch(`${gw.url}/tx/${a.id}`)).status).toBe(404)
  })

  it('rejects a bad signature with 400', async () => {
    const a = await item(rich, 'tampered payload')
    const raw = Buffer.from(a.getRaw())
    raw[raw.length - 1] ^= 0xff
    const res = await post(`${up.url}/tx`, raw)
    expect(res.status).toBe(400)
    expect(await res.text()).toBe('Invalid Data Item')
    expect((await post(`${up.url}/tx`, Buffer.from('not a data item at all'))).status).toBe(400)
  })

  it('an underfunded signer gets 402, then succeeds after a USDC top-up', async () => {
    const a = await item(poor, Buffer.alloc(300_000, 1))
    const r1 = await post(`${up.url}/tx`, a.getRaw())
    expect(r1.status).toBe(402)
    expect(await r1.text()).toBe('Insufficient balance')

    const payer = privateKeyToAccount(anvilAccount(5).privateKey)
    const wallet = createWalletClient({ chain: base.chain, transport: http(base.url), account: payer })
    const tx = await wallet.writeContract({ address: base.tokenAddress, abi: usdcArtifact().abi, functionName: 'transfer', args: [deposit, 1_000_000n] })
    // A client claims a top-up once its transfer is mined (under load the receipt may lag the returned hash).
    await wallet.extend(publicActions).waitForTransactionReceipt({ hash: tx })
    const top = await fetch(`${up.url}/v1/top-up/wallet/${arweaveAddress(poor)}/base-usdc/${tx}`, { method: 'POST' })
    expect(top.status).toBe(200)
    const credited = (await top.json()) as { creditedTransaction: { winstonCreditAmount: string } }
    expect(credited.creditedTransaction.winstonCreditAmount).toBe('200000000000') // $1 at $10 per 2e12 winc
    // the same funding transaction is credited once
    await fetch(`${up.url}/v1/top-up/wallet/${arweaveAddress(poor)}/base-usdc/${tx}`, { method: 'POST' })
    const bal = (await (await fetch(`${up.url}/v1/balance/${arweaveAddress(poor)}`)).json()) as { winc: string }
    expect(bal.winc).toBe('200000000000')

    const r2 = await post(`${up.url}/tx`, a.getRaw())
    expect(r2.status).toBe(200)
  })

  it('fails on demand, and survives close + restart on the same port with its data', async () => {
    up.fail({ scope: 'uploads' })
    const a = await item(rich, 'while down')
    expect((await post(`${up.url}/tx`, a.getRaw())).status).toBe(503)
    expect((await fetch(`${up.url}/v1/rates`)).status).toBe(200)
    up.recover()

    const port = up.port
    const balBefore = await (await fetch(`${up.url}/v1/balance/${arweaveAddress(rich)}`)).text()
    await up.close()
    await expect(fetch(`${up.url}/v1/rates`)).rejects.toThrow()
    up = await startUpstream({ ...upOpts, port })
    expect(up.port).toBe(port)
    expect(await (await fetch(`${up.url}/v1/balance/${arweaveAddress(rich)}`)).text()).toBe(balBefore)
    expect((await post(`${up.url}/tx`, a.getRaw())).status).toBe(200)
  })
})

describe('Arweave gateway block interval', () => {
  it('confirms on its own as blocks are produced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devnet-weave-'))
    const jwk = await generateArweaveJwk()
    const up = await startUpstream({ dataDir: dir, blockIntervalMs: 150 })
    const gw = await startArweaveGateway({ dataDir: dir })
    try {
      const a = await item(jwk, 'small and free')
      expect((await post(`${up.url}/tx`, a.getRaw())).status).toBe(200)
      let conf = 0
      for (let i = 0; i < 50 && conf < 2; i++) {
        const r = await fetch(`${gw.url}/tx/${a.id}/status`)
        if (r.status === 200) conf = ((await r.json()) as { number_of_confirmations: number }).number_of_confirmations
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(conf).toBeGreaterThanOrEqual(2)
    } finally {
      await gw.close()
      await up.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
