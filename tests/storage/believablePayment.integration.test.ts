/**
 * No upload slot before a payment is believable, played as an attacker against the real gateway (`createApp`,
 * response validation on) and the devnet peers (local Base + facilitator, the storage upstream, the Arweave
 * gateway, algod). Each refused payment is held while its body trickles in, and the test looks: no upload slot
 * is taken and nothing is written to the spool; sent whole, it is answered 402 (409 for a replay).
 *
 * - EIP-3009: a structurally valid header with a random signature; one signed by a payer without funds; one
 *   whose nonce was already used on chain; one whose window has passed; a funded payer who signs more than its
 *   balance covers. Four addresses × four trickling forged uploads no longer hold the slots an honest paid
 *   upload needs (before: every slot held, the honest upload refused 503 `too_many_uploads`).
 * - A payer the chain cannot be asked about (its RPC down) gets only the small pool of its own.
 * - A refused payment with a body above the unpaid limit (an underfunded payer, a forged signature) is answered
 *   402 with what is wrong with the payment, before its body is read — not the unpaid limit's 413.
 * - Algorand: a pending transaction whose sender no longer holds the amount, one whose validity window closed,
 *   one in another asset or below the least price, and a transaction that already paid an upload.
 */
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import algosdk from 'algosdk'
import { createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { OTHER_ASA_ID, USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { type AlgodPeer, startAlgod } from '../../devnet/algod/startAlgod.js'
import { canonicalUsdc, usdcArtifact } from '../../devnet/chains/startChain.js'
import { createAlgodClient } from '../../src/x402/rails/algorand/createAlgodClient.js'
import { evmEnv, type EvmPeers, PAY_TO_EVM, payAndStoreOk, startAppGateway, startEvmPeers } from './harness.js'
import { BOUNDARY, FILE_HEAD, postFrom as post, trickle } from './support/trickleUpload.js'

const ALGOD_TOKEN = 'd'.repeat(64)
const ALGO_PAY_TO = algoTestAccount(2).address

let peers: EvmPeers
let node: AlgodPeer
type Gateway = Awaited<ReturnType<typeof startAppGateway>>
/** Four upload slots and one for payers that cannot be verified; trickles stay connected (long rate windows). */
let gw: Gateway
/** The same, with the chain's RPC down: no payer can be verified. */
let blind: Gateway
/** The same, reading at most 64 KiB of a body whose payment is not believed. */
let small: Gateway

beforeAll(async () => {
  peers = await startEvmPeers()
  // transactions stay pending 100 rounds unless the test produces rounds (`node.advance()`)
  node = await startAlgod({
    token: ALGOD_TOKEN,
    roundIntervalMs: 200,
    confirmRounds: 100,
    assetCreator: algoTestAccount(0).address,
    accounts: [
      ...[1, 3].map((i) => ({ address: algoTestAccount(i).address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC, otherAsa: ALGO_PAYER_USDC })),
      { address: ALGO_PAY_TO, microAlgos: 1_000_000n, usdc: 0n, otherAsa: 0n },
    ],
  })
  const env = {
    ...evmEnv(peers),
    SERVICE_ALGOD__URL: node.url,
    SERVICE_ALGOD__TOKEN: ALGOD_TOKEN,
    SERVICE_X402__PAY_TO_ALGORAND: ALGO_PAY_TO,
    SERVICE_ALGOD__POLL_INTERVAL_MS: '200',
    SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS: '4',
    SERVICE_STORAGE__UNVERIFIED_UPLOADS: '1',
    SERVICE_STORAGE__UNPAID_PER_ADDRESS: '4',
    SERVICE_STORAGE__MIN_RECEIVE_BYTES_PER_S: '1',
    SERVICE_STORAGE__MIN_RATE_WINDOW_S: '120',
    SERVICE_STORAGE__ALGORAND_UNKNOWN_TX_MS: '1500',
  }
  delete (env as Record<string, string>).SERVICE_ALGOD__GENESIS_HASH
  gw = await startAppGateway(env, peers.dir)
  blind = await startAppGateway({ ...env, SERVICE_X402__RPC_URL__EIP155_8453: 'http://127.0.0.1:9' }, peers.dir)
  small = await startAppGateway({ ...env, SERVICE_STORAGE__UNPAID_MAX_BYTES: String(64 * 1024) }, peers.dir)
}, 180_000)
afterAll(async () => {
  await small?.close()
  await gw?.close()
  await blind?.close()
  await node?.close()
  await peers?.close()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const spooled = async (g: Gateway) => (await readdir(g.service.spoolTmpDir).catch(() => [] as string[])).length

/**
 * The attack of one header: held while its body trickles in (from `localAddress`), the gateway takes no upload
 * slot and writes nothing; sent whole, its answer is returned.
 */
async function refusedBeforeAnySlot(headers: Record<string, string>, localAddress: string, g: Gateway = gw) {
  const held = trickle(g.url, localAddress, headers)
  try {
    await sleep(700)
    expect(held.answered).toBeUndefined()
    expect([g.service.uploadSlots.inUse, g.service.uploadSlots.unverifiedInUse]).toEqual([0, 0])
    expect(await spooled(g)).toBe(0)
  } finally {
    held.stop()
  }
  const answer = await post(g.url, localAddress, randomBytes(512), headers)
  expect(await spooled(g)).toBe(0)
  return answer
}

// ── EVM ──

type Authorization = { from: Hex; to: Hex; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex }
const pub = () => createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) })
const now = () => BigInt(Math.floor(Date.now() / 1000))
const authorization = (from: Hex, change: Partial<Authorization> = {}): Authorization => ({
  from,
  to: PAY_TO_EVM as Hex,
  value: 10_000n,
  validAfter: 0n,
  validBefore: now() + 600n,
  nonce: `0x${randomBytes(32).toString('hex')}`,
  ...change,
})
const typed = (a: Authorization) => {
  const usdc = canonicalUsdc(8453)!
  return {
    domain: { name: usdc.name, version: usdc.version, chainId: 8453, verifyingContract: peers.base.tokenAddress },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization' as const,
    message: a,
  }
}
const sign = (account: PrivateKeyAccount, a: Authorization) => account.signTypedData(typed(a))
/** The x402 v2 header of an EIP-3009 authorization on local Base. */
function evmHeader(a: Authorization, signature: Hex): Record<string, string> {
  const payload = {
    x402Version: 2,
    accepted: { scheme: 'exact', network: peers.base.network, asset: peers.base.tokenAddress, payTo: PAY_TO_EVM },
    payload: { signature, authorization: { ...a, value: a.value.toString(), validAfter: a.validAfter.toString(), validBefore: a.validBefore.toString() } },
  }
  return { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') }
}
/** Sends `amount` of the devnet USDC from Anvil payer #4 to `to`. */
async function fund(to: Hex, amount: bigint): Promise<void> {
  const wallet = createWalletClient({ chain: peers.base.chain, transport: http(peers.base.url), account: privateKeyToAccount(anvilAccount(4).privateKey) })
  const hash = await wallet.writeContract({ address: peers.base.tokenAddress, abi: usdcArtifact().abi, functionName: 'transfer', args: [to, amount] })
  await pub().waitForTransactionReceipt({ hash })
}

describe('EIP-3009: no slot and no spool file before the payment is believable', () => {
  it('a structurally valid header with a random signature (a payer with no funds) is refused 402: not signed by its payer', async () => {
    const a = authorization(privateKeyToAccount(generatePrivateKey()).address)
    const answer = await refusedBeforeAnySlot(evmHeader(a, `0x${randomBytes(65).toString('hex')}`), '127.0.0.21')
    expect(answer.status).toBe(402)
    expect(answer.body).toMatchObject({ error: 'invalid_payment', message: expect.stringContaining('not signed by its payer') })
    expect(gw.validationErrors).toEqual([])
  })

  it('a payer without funds, signing for itself, is refused 402: the balance does not cover the value', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const a = authorization(account.address)
    const answer = await refusedBeforeAnySlot(evmHeader(a, await sign(account, a)), '127.0.0.22')
    expect(answer.status).toBe(402)
    expect(answer.body.message).toMatch(/balance \(0\) does not cover authorization\.value 10000/)
  })

  it('an authorization whose nonce was already used on chain is refused 402', async () => {
    const payer = privateKeyToAccount(anvilAccount(5).privateKey)
    const a = authorization(payer.address)
    const signature = await sign(payer, a)
    // someone relays it to the token contract first (the authorization is public once sent)
    const relayer = createWalletClient({ chain: peers.base.chain, transport: http(peers.base.url), account: privateKeyToAccount(anvilAccount(6).privateKey) })
    const hash = await relayer.writeContract({ address: peers.base.tokenAddress, abi: usdcArtifact().abi, functionName: 'transferWithAuthorization', args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature] })
    expect((await pub().waitForTransactionReceipt({ hash })).status).toBe('success')
    const answer = await refusedBeforeAnySlot(evmHeader(a, signature), '127.0.0.23')
    expect(answer.status).toBe(402)
    expect(answer.body.message).toContain('nonce is already used')
  })

  it('an authorization whose window has passed is refused 402', async () => {
    const payer = privateKeyToAccount(anvilAccount(5).privateKey)
    const a = authorization(payer.address, { validBefore: now() - 10n })
    const answer = await refusedBeforeAnySlot(evmHeader(a, await sign(payer, a)), '127.0.0.24')
    expect(answer.status).toBe(402)
    expect(answer.body.message).toContain('validBefore')
  })

  it('a funded payer holds no more slots than its balance covers: its third authorization of 0.005 on a balance of 0.01 is refused', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    await fund(account.address, 10_000n)
    const headers = await Promise.all(
      [0, 1, 2].map(async () => {
        const a = authorization(account.address, { value: 5_000n })
        return evmHeader(a, await sign(account, a))
      }),
    )
    const held = [trickle(gw.url, '127.0.0.25', headers[0]!), trickle(gw.url, '127.0.0.26', headers[1]!)]
    try {
      for (let i = 0; i < 100 && gw.service.uploadSlots.inUse < 2; i++) await sleep(100)
      expect(gw.service.uploadSlots.inUse).toBe(2)
      const third = await post(gw.url, '127.0.0.27', randomBytes(64), headers[2]!)
      expect(third.status).toBe(402)
      expect(third.body.message).toContain('beside the 10000 its other uploads in flight here authorised')
    } finally {
      for (const h of held) h.stop()
    }
    for (let i = 0; i < 50 && gw.service.uploadSlots.inUse > 0; i++) await sleep(100)
    expect(gw.service.uploadSlots.inUse).toBe(0)
  })

  it('four addresses × four trickling forged uploads hold no slot: an honest paid upload is stored, no 503', async () => {
    const held: ReturnType<typeof trickle>[] = []
    for (let address = 0; address < 4; address++) {
      for (let i = 0; i < 4; i++) {
        const a = authorization(privateKeyToAccount(generatePrivateKey()).address)
        held.push(trickle(gw.url, `127.0.0.${40 + address}`, evmHeader(a, `0x${randomBytes(65).toString('hex')}`)))
      }
    }
    try {
      await sleep(900)
      expect(held.map((h) => h.answered)).toEqual(held.map(() => undefined))
      expect([gw.service.uploadSlots.inUse, gw.service.uploadSlots.unverifiedInUse]).toEqual([0, 0])
      const stored = await payAndStoreOk(gw.url, peers.base, 3, randomBytes(2048))
      expect(stored.arTxId).toMatch(/^[A-Za-z0-9_-]{43}$/)
    } finally {
      for (const h of held) h.stop()
    }
    expect(gw.validationErrors).toEqual([])
  }, 60_000)

  it('a payer the chain cannot be asked about (RPC down) gets only the small pool: one slot, then 503 too_many_uploads for that pool', async () => {
    const payer = privateKeyToAccount(anvilAccount(5).privateKey)
    const headers = await Promise.all(
      [0, 1].map(async () => {
        const a = authorization(payer.address)
        return evmHeader(a, await sign(payer, a))
      }),
    )
    const first = trickle(blind.url, '127.0.0.50', headers[0]!)
    try {
      // (the chain is asked first: its refusal, or its 3 s timeout, decides the pool)
      for (let i = 0; i < 100 && blind.service.uploadSlots.unverifiedInUse === 0; i++) await sleep(100)
      expect([blind.service.uploadSlots.inUse, blind.service.uploadSlots.unverifiedInUse]).toEqual([0, 1])
      const second = await post(blind.url, '127.0.0.51', randomBytes(64), headers[1]!)
      expect(second.status).toBe(503)
      expect(second.body).toMatchObject({ error: 'too_many_uploads', details: { max_concurrent_uploads: 1, pool: 'unverified' } })
      // a forged one cannot be told from a contract wallet's without the chain: the same small pool, never more
      const forged = authorization(privateKeyToAccount(generatePrivateKey()).address)
      expect((await post(blind.url, '127.0.0.52', randomBytes(64), evmHeader(forged, `0x${randomBytes(65).toString('hex')}`))).status).toBe(503)
      expect(blind.service.uploadSlots.inUse).toBe(0)
    } finally {
      first.stop()
    }
    expect(blind.validationErrors).toEqual([])
  })
})

/**
 * A paid upload declaring `declaredBytes` that sends only its multipart head and waits: the answer (status and
 * JSON) it gets without sending its body, or `undefined` when none comes within `waitMs`.
 */
function headOnly(url: string, localAddress: string, headers: Record<string, string>, declaredBytes: number, waitMs = 10_000): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/store`, { method: 'POST', localAddress, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(declaredBytes), ...headers } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => {
        clearTimeout(timer)
        req.destroy()
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> })
      })
    })
    const timer = setTimeout(() => {
      req.destroy()
      resolve(undefined)
    }, waitMs)
    req.on('error', () => undefined)
    req.write(FILE_HEAD)
  })
}

describe('a refused payment with a body above the unpaid limit: the payment is what is wrong, said before the body is read', () => {
  const LARGE = 3_000_000 // above 64 KiB and its framing allowance: nothing of it is read

  it('an underfunded payer signing for itself gets 402 saying its balance does not cover the value, not 413 unpaid_body_too_large', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const a = authorization(account.address)
    const answer = await headOnly(small.url, '127.0.0.71', evmHeader(a, await sign(account, a)), LARGE)
    expect(answer?.status, JSON.stringify(answer?.body)).toBe(402)
    expect(answer?.body.error).toBe('invalid_payment')
    expect(answer?.body.message).toMatch(/balance \(0\) does not cover authorization\.value 10000 — the body was not read/)
    // actionable still: requirements priced for the length the request declares, and where the exact price is
    expect(answer?.body.message).toContain(`the requirements price ${LARGE} bytes (the request declares ${LARGE}): GET /store/quote?bytes=<file size>`)
    expect((answer?.body.accepts as unknown[]).length).toBeGreaterThan(0)
    expect([small.service.uploadSlots.inUse, await spooled(small)]).toEqual([0, 0])
    expect(small.validationErrors).toEqual([])
  })

  it('a forged signature gets 402 invalid_payment: not signed by its payer', async () => {
    const a = authorization(privateKeyToAccount(generatePrivateKey()).address)
    const answer = await headOnly(small.url, '127.0.0.72', evmHeader(a, `0x${randomBytes(65).toString('hex')}`), LARGE)
    expect(answer?.status, JSON.stringify(answer?.body)).toBe(402)
    expect(answer?.body).toMatchObject({ error: 'invalid_payment', message: expect.stringContaining('not signed by its payer') })
    expect(small.validationErrors).toEqual([])
  })

  it('without a payment the unpaid limit still answers 413 unpaid_body_too_large', async () => {
    const answer = await headOnly(small.url, '127.0.0.73', {}, LARGE)
    expect(answer?.status).toBe(413)
    expect(answer?.body.error).toBe('unpaid_body_too_large')
  })
})

// ── Algorand ──

const algod = () => createAlgodClient(node.url, ALGOD_TOKEN)
const algoNetwork = () => `algorand:${node.genesisHash}`
/** Submits a transfer to the service from test account `from` (pending until rounds are produced); its id. */
async function submitAlgo(from: number, o: { amount?: bigint; assetIndex?: bigint; lastValidIn?: bigint } = {}): Promise<string> {
  const payer = algoTestAccount(from)
  const params = await algod().getTransactionParams().do()
  if (o.lastValidIn !== undefined) params.lastValid = params.firstValid + o.lastValidIn
  const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: payer.address,
    receiver: ALGO_PAY_TO,
    assetIndex: o.assetIndex ?? USDC_ASA_ID,
    amount: o.amount ?? 10_000n,
    note: new Uint8Array(randomBytes(32)),
    suggestedParams: params,
  })
  return (await algod().sendRawTransaction(txn.signTxn(payer.sk)).do()).txid
}
const algoHeader = (txId: string) => ({ 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify({ x402Version: 2, accepted: { scheme: 'exact', network: algoNetwork() }, payload: { txId } })).toString('base64') })

describe('Algorand: no slot and no spool file before the payment is believable', () => {
  it('a pending transaction whose sender no longer holds the amount is refused 402', async () => {
    const txId = await submitAlgo(1)
    // the sender's USDC leaves by another way (another node's block): the pooled transfer can never confirm
    node.ledger.account(algoTestAccount(1).address).assets.set(USDC_ASA_ID, 0n)
    const answer = await refusedBeforeAnySlot(algoHeader(txId), '127.0.0.61')
    expect(answer.status).toBe(402)
    expect(answer.body.message).toMatch(/the sender holds 0 of asset 31566704, below the 10000/)
    node.ledger.account(algoTestAccount(1).address).assets.set(USDC_ASA_ID, ALGO_PAYER_USDC)
    expect(gw.validationErrors).toEqual([])
  })

  it('a pending transaction whose validity window closed is refused 402 expired_payment', async () => {
    const txId = await submitAlgo(3, { lastValidIn: 2n })
    for (let i = 0; i < 3; i++) node.advance()
    const answer = await refusedBeforeAnySlot(algoHeader(txId), '127.0.0.62')
    expect(answer.status).toBe(402)
    expect(answer.body).toMatchObject({ error: 'expired_payment', message: expect.stringContaining('it can never confirm') })
  })

  it('a transfer in another asset, or below the least an upload costs, is refused 402', async () => {
    const other = await refusedBeforeAnySlot(algoHeader(await submitAlgo(3, { assetIndex: OTHER_ASA_ID })), '127.0.0.63')
    expect(other.status).toBe(402)
    expect(other.body.error).toBe('wrong_asset')
    const tiny = await refusedBeforeAnySlot(algoHeader(await submitAlgo(3, { amount: 1n })), '127.0.0.64')
    expect(tiny.status).toBe(402)
    expect(tiny.body.error).toBe('insufficient_amount')
  })

  it('a transaction that already paid an upload is refused 409 before anything is read', async () => {
    const txId = await submitAlgo(3)
    const sender = algoTestAccount(3).address
    // it paid an upload here already (its claim, as a paid upload records it)
    await gw.services.storage.ledger.db
      .insertInto('payment_claims')
      .values({ network: algoNetwork(), payer: sender, nonce: txId, route: 'store', ref: 'dep_already_paid', created_at: Number(now()) })
      .execute()
    // answered at once, its body unread: no slot, nothing written
    const held = trickle(gw.url, '127.0.0.65', algoHeader(txId))
    try {
      await sleep(700)
      expect(held.answered).toBe(409)
      expect([gw.service.uploadSlots.inUse, gw.service.uploadSlots.unverifiedInUse, await spooled(gw)]).toEqual([0, 0, 0])
    } finally {
      held.stop()
    }
    const answer = await post(gw.url, '127.0.0.65', randomBytes(512), algoHeader(txId))
    expect(answer.status).toBe(409)
    expect(answer.body.error).toBe('payment_replayed')
  })
})
