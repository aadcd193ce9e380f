/**
 * `pay2store store` when the connection of its paid upload is lost, against the real gateway on the devnet peers
 * behind a TCP proxy of the test's own that cuts the paid request (the one carrying `PAYMENT-SIGNATURE`): when
 * the gateway's answer starts (the upload is paid and stored; the answer never reaches the CLI), or after part
 * of the body (nothing paid yet). The CLI never says "cannot reach … is the gateway running?" — an invitation to
 * pay again — it sends the same payment again (same authorization, same payment identifier), which cannot be
 * charged twice, and gets the storage id; one payment settles on chain and one upload is recorded. When no
 * answer ever comes back it says the payment may have been taken and how to check (`uploads`), exit 8.
 *
 * A gateway that takes the connection and never answers (`--idle-timeout`): the quote is given up as unreachable
 * (exit 3), the paid upload goes down the same lost-connection path (the same payment again, then exit 8). A
 * `--gateway` with a wrong path says the gateway's own code, not `http_401`.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, erc20Abi, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { EXIT } from '../../src/cli/CliError.js'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers, type TestGateway } from '../storage/harness.js'
import { runCliInProcess as cli } from '../support/runCliInProcess.js'

const KEY_ENV = 'PAY2STORE_TEST_KEY'
const payer = (i: number) => ({ [KEY_ENV]: anvilAccount(i).privateKey })

/**
 * What the proxy does to the next paid requests: cut them when the answer starts, or after `bodyBytes` of the
 * request, or swallow the answer and keep the connection open (`hang`: a gateway that never answers).
 */
type Cut = { at: 'answer' } | { at: 'body'; bodyBytes: number } | { at: 'hang' }

/**
 * A TCP proxy to `target` that resets the client's connection of the next `count` paid requests as `cut` says
 * (the gateway's side is closed too). Counts the paid requests it saw.
 */
async function startCuttingProxy(target: URL): Promise<{ url: string; cut(cut: Cut, count: number): void; paidSeen: () => number; close(): Promise<void> }> {
  let plan: Cut = { at: 'answer' }
  let left = 0
  let seen = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(client).add(upstream)
    let cutting: Cut | undefined
    let sentAfterHead = 0
    const cut = () => {
      client.resetAndDestroy()
      upstream.destroy()
    }
    client.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1').toLowerCase().includes('\r\npayment-signature:')) {
        seen++
        cutting = left > 0 ? plan : undefined
        if (left > 0) left--
        sentAfterHead = 0
      }
      if (cutting?.at === 'body') {
        sentAfterHead += chunk.length
        if (sentAfterHead > cutting.bodyBytes) return cut()
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (cutting?.at === 'hang') return
      if (cutting?.at === 'answer') return cut()
      client.write(chunk)
    })
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.end())
    upstream.on('close', () => client.end())
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut(cut, count) {
      plan = cut
      left = count
    },
    paidSeen: () => seen,
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}

let peers: EvmPeers
let gw: TestGateway
let proxy: Awaited<ReturnType<typeof startCuttingProxy>>
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-paid-retry-'))
  peers = await startEvmPeers()
  gw = await startAppGateway(evmEnv(peers), peers.dir)
  proxy = await startCuttingProxy(new URL(gw.url))
}, 180_000)
afterAll(async () => {
  await proxy?.close()
  await gw?.close()
  await peers?.close()
  await rm(dir, { recursive: true, force: true })
})

const balance = (i: number) =>
  createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) }).readContract({ address: peers.base.tokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [anvilAccount(i).address] })

/** The recorded uploads of `payer` for the file whose SHA-256 is `sha256`. */
const uploadsOf = async (i: number, sha256: string) => (await gw.ledger.listByPayer(anvilAccount(i).address, 200)).filter((r) => r.upload.sha256 === sha256)

describe('store: the paid upload loses its connection', () => {
  it('the answer is cut off after the upload was paid and stored: the same payment is sent again, the CLI prints the storage id, one payment settles', async () => {
    const file = join(dir, 'answer-cut.bin')
    await writeFile(file, randomBytes(200_000))
    const before = await balance(2)
    const seenBefore = proxy.paidSeen()
    proxy.cut({ at: 'answer' }, 1)
    const r = await cli(['store', file, '--gateway', proxy.url, '--key-env', KEY_ENV, '--arweave', peers.arweave.url, '--json'], payer(2))
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.out).not.toMatch(/cannot reach|is the gateway running/)
    expect(r.json.arTxId).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(proxy.paidSeen() - seenBefore).toBe(2) // the paid request, and the same payment once more
    expect(before - (await balance(2))).toBe(BigInt(r.json.amountAtomic))
    const rows = await uploadsOf(2, r.json.sha256)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.upload.ar_tx_id).toBe(r.json.arTxId)
  }, 120_000)

  it('the paid request is cut in its body (nothing paid yet): the same payment again stores the file, one payment settles', async () => {
    const file = join(dir, 'body-cut.bin')
    await writeFile(file, randomBytes(600_000))
    const before = await balance(3)
    proxy.cut({ at: 'body', bodyBytes: 128 * 1024 }, 1)
    const r = await cli(['store', file, '--gateway', proxy.url, '--key-env', KEY_ENV, '--arweave', peers.arweave.url, '--json'], payer(3))
    expect(r.code, r.out + r.err).toBe(EXIT.ok)
    expect(r.json.arTxId).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(before - (await balance(3))).toBe(BigInt(r.json.amountAtomic))
    expect(await uploadsOf(3, r.json.sha256)).toHaveLength(1)
  }, 120_000)

  it('no answer ever comes back: the message says the payment may have been taken and how to check (exit 8), never "is the gateway running"; `uploads` then shows the stored upload', async () => {
    const file = join(dir, 'never.bin')
    const bytes = randomBytes(100_000)
    await writeFile(file, bytes)
    const before = await balance(4)
    proxy.cut({ at: 'answer' }, 1_000)
    const started = Date.now()
    const r = await cli(['store', file, '--gateway', proxy.url, '--key-env', KEY_ENV, '--arweave', peers.arweave.url, '--paid-retry', '4'], payer(4))
    proxy.cut({ at: 'answer' }, 0)
    expect(r.code, r.out + r.err).toBe(EXIT.paymentUnknown)
    expect(Date.now() - started).toBeLessThan(30_000)
    const line = r.err.trim()
    expect(line).not.toMatch(/cannot reach|is the gateway running|npm start/)
    expect(line).toMatch(/^pay2store: the connection to http:\/\/127\.0\.0\.1:\d+\/store was lost after the payment was sent \(connection reset\)/)
    expect(line).toContain('the payment may already have been taken — do not store the file again (that would pay again): the gateway keeps a paid upload and finishes it')
    expect(line).toContain("check this wallet's uploads with `npx pay2store uploads`")
    expect(line.split('\n')).toHaveLength(1)
    // the first request was paid and stored: charged once, however many times the same payment was sent again
    expect(before - (await balance(4))).toBeGreaterThan(0n)
    const { createHash } = await import('node:crypto')
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const rows = await uploadsOf(4, sha256)
    expect(rows).toHaveLength(1)
    expect(before - (await balance(4))).toBe(BigInt(rows[0]!.deposit.amount_atomic))
    // what the message says to do works: the wallet's uploads show the storage id
    const listed = await cli(['uploads', '--gateway', gw.url, '--key-env', KEY_ENV, '--json'], payer(4))
    expect(listed.code, listed.out + listed.err).toBe(EXIT.ok)
    expect(listed.json.uploads.find((u: { sha256: string }) => u.sha256 === sha256)).toMatchObject({ ar_tx_id: rows[0]!.upload.ar_tx_id })
    const human = await cli(['uploads', '--gateway', gw.url, '--key-env', KEY_ENV], payer(4))
    expect(human.out).toContain(`storage id   ${rows[0]!.upload.ar_tx_id}\n`)
    expect(human.out).toContain(`sha256       ${sha256}`)
  }, 120_000)

  it('the gateway never answers the paid upload: after --idle-timeout the same payment is sent again, then exit 8 saying how to check — it does not hang', async () => {
    const file = join(dir, 'hang.bin')
    const bytes = randomBytes(100_000)
    await writeFile(file, bytes)
    const before = await balance(5)
    const seenBefore = proxy.paidSeen()
    proxy.cut({ at: 'hang' }, 1_000)
    const started = Date.now()
    const r = await cli(['store', file, '--gateway', proxy.url, '--key-env', KEY_ENV, '--paid-retry', '3', '--idle-timeout', '2'], payer(5))
    proxy.cut({ at: 'hang' }, 0)
    expect(r.code, r.out + r.err).toBe(EXIT.paymentUnknown)
    expect(Date.now() - started).toBeLessThan(30_000)
    const line = r.err.trim()
    expect(line).toMatch(/^pay2store: the connection to http:\/\/127\.0\.0\.1:\d+\/store was lost after the payment was sent \(nothing moved either way for 2 s; --idle-timeout\)/)
    expect(line).toContain("the payment may already have been taken — do not store the file again (that would pay again)")
    expect(line).toContain("check this wallet's uploads with `npx pay2store uploads`")
    expect(proxy.paidSeen() - seenBefore).toBeGreaterThanOrEqual(2) // the same payment sent again, never a new one
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const rows = await uploadsOf(5, sha256)
    expect(rows).toHaveLength(1)
    expect(before - (await balance(5))).toBe(BigInt(rows[0]!.deposit.amount_atomic))
  }, 120_000)

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})

describe('store: a gateway that does not answer as one', () => {
  it('a server that takes the connection and never answers: the quote is given up after --idle-timeout, exit 3, nothing paid', async () => {
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => void sockets.add(socket))
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
    try {
      const file = join(dir, 'silent.bin')
      await writeFile(file, randomBytes(1_000))
      const started = Date.now()
      const r = await cli(['store', file, '--gateway', url, '--key-env', KEY_ENV, '--idle-timeout', '1', '--json'], payer(6))
      expect(r.code, r.out + r.err).toBe(EXIT.unreachable)
      expect(Date.now() - started).toBeLessThan(15_000)
      expect(r.json).toMatchObject({ error: 'server_unreachable', message: expect.stringContaining(`cannot reach ${url}/store (nothing moved either way for 1 s; --idle-timeout)`) })
      const bad = await cli(['store', file, '--gateway', url, '--key-env', KEY_ENV, '--idle-timeout', 'soon'], payer(6))
      expect(bad.code).toBe(EXIT.usage)
      expect(bad.err).toContain('--idle-timeout takes a number of seconds, not soon')
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise((r) => silent.close(r))
    }
  }, 60_000)

  it("a --gateway with a wrong path: the gateway's own code and words, and what to check — not `http_401`", async () => {
    const file = join(dir, 'wrong-path.bin')
    await writeFile(file, randomBytes(1_000))
    const r = await cli(['store', file, '--gateway', `${gw.url}/wrong`, '--key-env', KEY_ENV, '--json'], payer(6))
    expect(r.code, r.out + r.err).toBe(EXIT.server)
    expect(r.json.error).toBe('auth_required')
    expect(r.json.message).toBe("GET /store/quote answered 401: auth_required at /wrong/store/quote?bytes=1000 — no such public route there: is --gateway the gateway's base URL (e.g. http://localhost:8000)?")
  })
})
