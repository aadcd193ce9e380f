/**
 * Receipt batches end to end with nothing written by hand. Payers pay and store through the real
 * gateway app (`POST /store`, OpenAPI router, response validation `error`): two on local Base (eip155:8453)
 * and one on local Ethereum (eip155:1) with the stock x402 reference client. Then the real
 * `npm run batch -- --json` CLI (a child process on the same database and chain) stores the tree file
 * and commits the root to ReceiptBatches (deployed by `contracts/deploy.ts`, with ATTESTOR_ROLE granted to the service key).
 * Checked: `RootCommitted` in the event log (leafCount 3), the tree file on the devnet Arweave gateway has
 * the committed root over exactly those leaves, and each receipt served by `GET /store/receipts/{ar_tx_id}`
 * is accepted by `attestLeaf` once (`Stored`), then refused with `claimed`; tampered fields or proof get
 * `bad proof`. A second batch (epoch 2) does the same for an Algorand payer (USDC ASA, currency 3; leaf payer
 * = last 20 bytes of keccak256(public key)), claimed by a relayer.
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import algosdk from 'algosdk'
import Sqlite from 'better-sqlite3'
import {
  type Address,
  type Hex,
  BaseError as ViemBaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  getAddress,
  http,
  keccak256,
  parseAbi,
  parseEventLogs,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ContractsDeployment, deployContracts, ROLE } from '../../contracts/deploy.js'
import { anvilAccount } from '../../devnet/accounts.js'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { type AlgodPeer, startAlgod } from '../../devnet/algod/startAlgod.js'
import type { LocalChain } from '../../devnet/chains/startChain.js'
import { receiptBatchesAbi } from '../../src/batch/abi.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, startEvmPeers } from '../storage/harness.js'
import { catalogueEventErrors } from '../support/catalogueEventSchemas.js'

const run = promisify(execFile)
const repoRoot = join(import.meta.dirname, '..', '..')
const ALGOD_TOKEN = 'e'.repeat(64)
/** The service key: the harness's EVM pay-to address, granted ATTESTOR_ROLE at deploy (as `npm start` does). */
const SERVICE = anvilAccount(7)
if (SERVICE.address !== PAY_TO_EVM) throw new Error('the harness pay-to is expected to be Anvil account 7')
const DEPLOYER = anvilAccount(0)
/** Pays gas for the Algorand payer's claim (attestLeaf is open to anyone holding the proof). */
const RELAYER = anvilAccount(5)
const algoService = algosdk.generateAccount()
const algoPayer = algoTestAccount(1)

/** Leaf fields as docs/design.md defines them, computed here independently of src/batch. */
type Expected = {
  label: string
  network: string
  payer: Address
  currency: number
  sizeBytes: number
  paidAtomics: bigint
  sha256: string
  arTxId: string
  /** Who sends attestLeaf. */
  sender: Hex
}

let peers: EvmPeers
let algod: AlgodPeer
let gw: Awaited<ReturnType<typeof startGateway>>
let deployment: ContractsDeployment

beforeAll(async () => {
  peers = await startEvmPeers()
  algod = await startAlgod({
    token: ALGOD_TOKEN,
    roundIntervalMs: 200,
    assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: algoPayer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: algoService.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
    ],
  })
  const env: Record<string, string> = {
    ...evmEnv(peers),
    SERVICE_ALGOD__URL: algod.url,
    SERVICE_ALGOD__TOKEN: ALGOD_TOKEN,
    SERVICE_ALGOD__POLL_INTERVAL_MS: '200',
    SERVICE_ALGOD__TIMEOUT_MS: '10000',
    SERVICE_X402__PAY_TO_ALGORAND: algoService.addr.toString(),
  }
  delete env.SERVICE_ALGOD__GENESIS_HASH
  gw = await startGateway(env, peers.dir)
  // contracts/deploy.ts on local Base; the deployment file goes to the gateway's data dir, where the batch reads it
  deployment = await deployContracts({
    rpcUrl: peers.base.url,
    deployerKey: DEPLOYER.privateKey,
    roles: { attestors: [SERVICE.address] },
    dataDir: gw.dataDir,
  })
}, 120_000)

afterAll(async () => {
  await gw?.close()
  await algod?.close()
  await peers?.close()
})

/**
 * The real gateway app (`createApp`) with the storage and receipt-batch domains, response validation
 * `error`, on a free port, with a file database the batch CLI opens too. (The storage harness's
 * `startAppGateway` mounts the storage domain only, so `GET /store/receipts/…` has no service there.)
 */
async function startGateway(env: Record<string, string>, dir: string) {
  const { createApp } = await import('../../src/app.js')
  const { loadConfig } = await import('../../src/config/loadConfig.js')
  const { createGatewayServer } = await import('../../src/createGatewayServer.js')
  const { initStorage } = await import('../../src/handlers/storage/index.js')
  const { initBatch } = await import('../../src/handlers/batch/index.js')
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const port = (probe.address() as AddressInfo).port
  await new Promise((r) => probe.close(r))
  const dataDir = join(dir, `e2e-gateway-${port}`)
  const databaseUrl = `sqlite:${join(dataDir, 'gateway.sqlite')}`
  const fullEnv: Record<string, string> = {
    SERVICE_PORT: String(port),
    SERVICE_PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_BATCH__ENABLED: '0',
    LOG_LEVEL: 'warn',
    ...env,
  }
  const validationErrors: unknown[] = []
  const config = loadConfig(fullEnv)
  const app = await createApp({
    config,
    env: fullEnv,
    domains: [initStorage, initBatch],
    responseValidation: 'error',
    onResponseValidationError: (report) => validationErrors.push(report),
  })
  const server = createGatewayServer(app.app, config.http).listen(port, '127.0.0.1')
  await new Promise<void>((r) => server.once('listening', () => r()))
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    databaseUrl,
    validationErrors,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await app.close()
    },
  }
}

const sha256Hex = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

type Requirement = { network: string; amount: string; payTo: string; asset: string; resource: string }

async function quote(data: Uint8Array): Promise<{ res: Response; body: { accepts: Requirement[] } }> {
  const res = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
  const body = (await res.json()) as { accepts: Requirement[] }
  expect(res.status, JSON.stringify(body)).toBe(402)
  return { res, body }
}

/** Quote, pay with the stock x402 client (`@x402/core` + `@x402/evm`) from Anvil account `index`, store. */
async function payEvm(chain: LocalChain, index: number, data: Uint8Array) {
  const { res, body } = await quote(data)
  const pub = createPublicClient({ chain: chain.chain, transport: http(chain.url) })
  const signer = toClientEvmSigner(privateKeyToAccount(anvilAccount(index).privateKey), pub)
  const client = new x402HTTPClient(
    new x402Client((_v, accepts) => accepts.find((a) => a.network === chain.network)!)
      .register('eip155:*', new ExactEvmScheme(signer))
      .setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.tokenAddress }] }),
  )
  const required = client.getPaymentRequiredResponse((n) => res.headers.get(n), body)
  const payload = await client.createPaymentPayload(required)
  const paid = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: client.encodePaymentSignatureHeader(payload) })
  const result = (await paid.json()) as { arTxId: string; sha256: string; sizeBytes: number; settlement: { network: string } }
  expect(paid.status, JSON.stringify(result)).toBe(200)
  expect(result.settlement.network).toBe(chain.network)
  return { arTxId: result.arTxId, amount: BigInt(required.accepts.find((a) => a.network === chain.network)!.amount) }
}

/** Quote, pay the Algorand requirement in USDC ASA with the request-binding note, store. */
async function payAlgorand(data: Uint8Array) {
  const { body } = await quote(data)
  const req = body.accepts.find((a) => a.network.startsWith('algorand:'))!
  expect(req.network).toBe(`algorand:${algod.genesisHash}`)
  const atomic = BigInt(req.amount)
  const priceUsd = `${atomic / 1_000_000n}.${(atomic % 1_000_000n).toString().padStart(6, '0')}`
  const note = createHash('sha256').update(`${req.resource}|${sha256Hex(data)}|${data.length}|${priceUsd}`).digest()
  const u = new URL(algod.url)
  const client = new algosdk.Algodv2(ALGOD_TOKEN, `${u.protocol}//${u.hostname}`, u.port)
  const params = await client.getTransactionParams().do()
  const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: algoPayer.address, receiver: req.payTo, assetIndex: USDC_ASA_ID, amount: atomic, note: new Uint8Array(note), suggestedParams: params,
  })
  const { txid } = await client.sendRawTransaction(txn.signTxn(algoPayer.sk)).do()
  const header = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: req.network, accepted: req, payload: { txId: txid } })).toString('base64')
  const paid = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: { 'PAYMENT-SIGNATURE': header } })
  const result = (await paid.json()) as { arTxId: string; settlement: { payer: string; asset: string } }
  expect(paid.status, JSON.stringify(result)).toBe(200)
  expect(result.settlement).toMatchObject({ payer: algoPayer.address, asset: String(USDC_ASA_ID) })
  return { arTxId: result.arTxId, amount: atomic }
}

/** The revert reason of a simulated call, or undefined when it would succeed. */
async function revertReason(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
    return undefined
  } catch (err) {
    const found = err instanceof ViemBaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined
    if (found instanceof ContractFunctionRevertedError) return found.reason
    throw err
  }
}

const leafOf = (e: { payer: Address; arTxid: Hex; sizeBytes: bigint; paidAtomics: bigint; currency: number }): Hex =>
  keccak256(
    keccak256(
      encodeAbiParameters(
        [{ type: 'address' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint16' }],
        [e.payer, e.arTxid, e.sizeBytes, e.paidAtomics, e.currency],
      ),
    ),
  )

const bytes32Of = (arTxId: string): Hex => `0x${Buffer.from(arTxId, 'base64url').toString('hex')}`

type ReceiptBody = {
  ar_tx_id: string
  ar_tx_id_bytes32: Hex
  payer: Address
  network: string
  asset: string
  currency: number
  size_bytes: number
  paid_atomics: string
  sha256: string
  stored_at: number
  batch: { epoch: number; root: Hex; leaf_count: number; arweave_tx: string; leaf: Hex; proof: Hex[] } | null
  /** Where to claim; null until committed. Newer than the rest of the body: read from the deployment when absent. */
  chain_id?: number | null
  contract?: Address | null
  commit_tx?: Hex | null
}

async function getReceipt(arTxId: string, hint = ''): Promise<ReceiptBody> {
  const res = await fetch(`${gw.url}/store/receipts/${arTxId}`)
  const body = await res.json()
  expect(res.status, `${JSON.stringify(body)} ${hint}`).toBe(200)
  return body as ReceiptBody
}

const pub = () => createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) })

/** `npm run batch -- --json`: the real CLI, a child process on the gateway's database and data dir (which holds the deployment). */
async function runBatchCli() {
  // the default cutoff is "now" in whole seconds, exclusive: start in a later second than the last upload
  await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)))
  const env = {
    ...process.env,
    SERVICE_DATA_DIR: gw.dataDir,
    SERVICE_DATABASE_URL: gw.databaseUrl,
    SERVICE_BATCH__RPC_URL: peers.base.url,
    SERVICE_BATCH__ATTESTOR_KEY: SERVICE.privateKey,
    SERVICE_STORAGE__PAYMENT_URL: peers.upstream.url,
    SERVICE_STORAGE__UPLOAD_URL: peers.upstream.url,
    SERVICE_STORAGE__ARWEAVE_JWK_PATH: peers.jwkPath,
  }
  const { stdout, stderr } = await run('npm', ['run', '--silent', 'batch', '--', '--json'], { cwd: repoRoot, env, timeout: 60_000 })
  const result = JSON.parse(stdout) as {
    resumed: unknown[]
    created: { epoch: number; root: Hex; leafCount: number; treeArTxId: string; commitTxHash: Hex; status: string }[]
    skipped: unknown[]
  }
  expect(result.skipped, stderr).toEqual([])
  expect(result.resumed).toEqual([])
  expect(result.created).toHaveLength(1)
  return result.created[0]!
}

type Batch = Awaited<ReturnType<typeof runBatchCli>>

/**
 * The batch is on chain and on the permaweb: its `RootCommitted` (read from the event log) was sent by the
 * service key, and the tree file on the devnet Arweave gateway has the committed root over exactly `expected`.
 */
async function checkCommitted(batch: Batch, expected: Expected[]) {
  expect(batch).toMatchObject({ leafCount: expected.length, status: 'committed' })
  const events = await pub().getContractEvents({ address: deployment.receiptBatches, abi: receiptBatchesAbi, eventName: 'RootCommitted', fromBlock: 0n })
  expect(events).toHaveLength(batch.epoch)
  const committed = events.find((e) => e.args.epoch === BigInt(batch.epoch))!
  expect(committed.args).toEqual({ epoch: BigInt(batch.epoch), root: batch.root, leafCount: BigInt(expected.length), arweaveTx: bytes32Of(batch.treeArTxId) })
  expect(committed.transactionHash).toBe(batch.commitTxHash)
  expect((await pub().getTransaction({ hash: batch.commitTxHash })).from).toBe(SERVICE.address.toLowerCase())
  expect(await pub().readContract({ address: deployment.receiptBatches, abi: receiptBatchesAbi, functionName: 'currentEpoch' })).toBe(BigInt(batch.epoch))

  const file = await fetch(`${peers.arweave.url}/${batch.treeArTxId}`)
  expect(file.status).toBe(200)
  const tree = StandardMerkleTree.load<[string, string, string, string, number]>(await file.json())
  expect(tree.root).toBe(committed.args.root)
  const treeLeaves = [...tree.entries()].map(([, v]) => [getAddress(v[0]), v[1].toLowerCase(), String(v[2]), String(v[3]), Number(v[4])])
  const wantLeaves = expected.map((e) => [e.payer, bytes32Of(e.arTxId), String(e.sizeBytes), e.paidAtomics.toString(), e.currency])
  expect(treeLeaves.sort()).toEqual(wantLeaves.sort())
}

/**
 * Each receipt as `GET /store/receipts/{ar_tx_id}` serves it, passed to `attestLeaf` field for field: a
 * tampered proof and an inflated amount revert `bad proof`, a wrong epoch `no such epoch`; the claim is
 * mined with `Stored`; the same claim again reverts `claimed`.
 */
async function claimEach(batch: Batch, expected: Expected[]) {
  for (const e of expected) {
    const r = await getReceipt(e.arTxId)
    expect(r, e.label).toMatchObject({
      ar_tx_id: e.arTxId,
      ar_tx_id_bytes32: bytes32Of(e.arTxId),
      payer: e.payer,
      network: e.network,
      currency: e.currency,
      size_bytes: e.sizeBytes,
      paid_atomics: e.paidAtomics.toString(),
      sha256: e.sha256,
      batch: { epoch: batch.epoch, root: batch.root, leaf_count: expected.length, arweave_tx: batch.treeArTxId },
    })
    // where to claim: the endpoint's chain_id / contract / commit_tx when it serves them, else the deployment's
    if (r.chain_id !== undefined) expect(r.chain_id).toBe(deployment.chainId)
    if (r.contract !== undefined) expect(getAddress(r.contract!)).toBe(deployment.receiptBatches)
    if (r.commit_tx !== undefined) expect(r.commit_tx!.toLowerCase()).toBe(batch.commitTxHash.toLowerCase())
    const target = r.contract ? getAddress(r.contract) : deployment.receiptBatches
    const rb = r.batch!
    const fields = { payer: r.payer, arTxid: r.ar_tx_id_bytes32, sizeBytes: BigInt(r.size_bytes), paidAtomics: BigInt(r.paid_atomics), currency: r.currency }
    expect(rb.leaf).toBe(leafOf(fields))

    const account = privateKeyToAccount(e.sender)
    const wallet = createWalletClient({ account, chain: peers.base.chain, transport: http(peers.base.url) })
    const args = [BigInt(rb.epoch), fields.payer, fields.arTxid, fields.sizeBytes, fields.paidAtomics, fields.currency, rb.proof] as const
    const simulate = (a: typeof args) =>
      pub().simulateContract({ account, address: target, abi: receiptBatchesAbi, functionName: 'attestLeaf', args: a })

    // refused before the claim: a tampered proof (one flipped bit; a one-leaf tree has an empty proof, so an
    // extra node), an inflated amount, an epoch not committed
    const tampered: Hex[] = rb.proof.length > 0
      ? rb.proof.map((p, i) => (i === 0 ? (`${p.slice(0, -1)}${(parseInt(p.slice(-1), 16) ^ 1).toString(16)}` as Hex) : p))
      : [keccak256('0x01')]
    expect(await revertReason(simulate([args[0], args[1], args[2], args[3], args[4], args[5], tampered])), e.label).toBe('bad proof')
    expect(await revertReason(simulate([args[0], args[1], args[2], args[3], args[4] + 1n, args[5], args[6]]))).toBe('bad proof')
    expect(await revertReason(simulate([args[0] + 1n, args[1], args[2], args[3], args[4], args[5], args[6]]))).toBe('no such epoch')

    // the claim is mined and emits Stored with the leaf's fields
    const { request } = await simulate(args)
    const hash = await wallet.writeContract(request)
    const mined = await pub().waitForTransactionReceipt({ hash, pollingInterval: 50 })
    expect(mined.status).toBe('success')
    const stored = parseEventLogs({ abi: receiptBatchesAbi, eventName: 'Stored', logs: mined.logs })
    expect(stored).toHaveLength(1)
    expect(stored[0]!.address).toBe(deployment.receiptBatches.toLowerCase())
    expect(stored[0]!.args, e.label).toEqual({
      payer: e.payer,
      arTxid: bytes32Of(e.arTxId),
      sizeBytes: BigInt(e.sizeBytes),
      paidAtomics: e.paidAtomics,
      currency: e.currency,
      epoch: BigInt(batch.epoch),
    })
    expect(await pub().readContract({ address: deployment.receiptBatches, abi: receiptBatchesAbi, functionName: 'claimed', args: [BigInt(batch.epoch), rb.leaf] })).toBe(true)

    // the second claim is refused, in a call and as a transaction
    expect(await revertReason(simulate(args)), e.label).toBe('claimed')
    await expect(wallet.writeContract(request)).rejects.toThrow(/claimed/)
  }
}

/** `storage_deposits.payer` of the deposit that paid for `arTxId`, read straight from the gateway's database. */
function depositPayerOf(arTxId: string): string | undefined {
  const db = new Sqlite(gw.databaseUrl.slice('sqlite:'.length), { readonly: true })
  try {
    const row = db
      .prepare('select d.payer from storage_uploads u join storage_deposits d on d.deposit_id = u.deposit_id where u.ar_tx_id = ?')
      .get(arTxId) as { payer: string } | undefined
    return row?.payer
  } finally {
    db.close()
  }
}

/** Before its batch: the receipt is served with the leaf fields, no proof and nowhere to claim yet. */
function expectPending(r: ReceiptBody, e: Expected) {
  expect(r, e.label).toMatchObject({ ar_tx_id: e.arTxId, payer: e.payer, currency: e.currency, paid_atomics: e.paidAtomics.toString(), batch: null })
  for (const k of ['chain_id', 'contract', 'commit_tx'] as const) if (k in r) expect(r[k], k).toBeNull()
}

describe('paid uploads → npm run batch → RootCommitted → attestLeaf once, then claimed (devnet, real gateway)', () => {
  it('three payers (two on Base, one on Ethereum) pay and store; epoch 1 commits all three; each claims once', async () => {
    // the service key holds ATTESTOR_ROLE on the freshly deployed ReceiptBatches
    const hasRole = parseAbi(['function hasRole(bytes32 role, address account) view returns (bool)'])
    expect(deployment.chainId).toBe(8453)
    expect(await pub().readContract({ address: deployment.receiptBatches, abi: hasRole, functionName: 'hasRole', args: [ROLE.ATTESTOR, SERVICE.address] })).toBe(true)

    // The two Base payments go one after the other: the devnet facilitator serialises settles per
    // authorization only, so two payers settling at once on one chain race for its signer's nonce
    // ("nonce too low" → 402). The Ethereum payment runs alongside.
    const files = [randomBytes(3000), randomBytes(5000), randomBytes(4000)]
    const onBase = (async () => [await payEvm(peers.base, 2, files[0]!), await payEvm(peers.base, 3, files[1]!)] as const)()
    const [[a, b], c] = await Promise.all([onBase, payEvm(peers.mainnet, 4, files[2]!)])
    const expected: Expected[] = [
      { label: 'Base payer 2', network: 'eip155:8453', payer: anvilAccount(2).address, currency: 1, sizeBytes: 3000, paidAtomics: a.amount, sha256: sha256Hex(files[0]!), arTxId: a.arTxId, sender: anvilAccount(2).privateKey },
      { label: 'Base payer 3', network: 'eip155:8453', payer: anvilAccount(3).address, currency: 1, sizeBytes: 5000, paidAtomics: b.amount, sha256: sha256Hex(files[1]!), arTxId: b.arTxId, sender: anvilAccount(3).privateKey },
      { label: 'Ethereum payer 4', network: 'eip155:1', payer: anvilAccount(4).address, currency: 2, sizeBytes: 4000, paidAtomics: c.amount, sha256: sha256Hex(files[2]!), arTxId: c.arTxId, sender: anvilAccount(4).privateKey },
    ]
    // before the batch each receipt is served without a proof
    for (const e of expected) expectPending(await getReceipt(e.arTxId), e)

    const batch = await runBatchCli()
    expect(batch).toMatchObject({ epoch: 1, leafCount: 3 })
    // the CLI tells the gateway's catalogue, as the gateway's own daily batch does
    const committed = readFileSync(join(gw.dataDir, 'catalogue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; payload: Record<string, unknown> }).filter((e) => e.kind === 'storage.batch.committed')
    expect(committed.map((e) => e.payload)).toEqual([expect.objectContaining({ epoch: 1, leaf_count: 3, root: batch.root, tree_ar_tx_id: batch.treeArTxId, commit_tx_hash: batch.commitTxHash })])
    expect(catalogueEventErrors('storage.batch.committed', committed[0]!.payload)).toBeUndefined()
    await checkCommitted(batch, expected)
    await claimEach(batch, expected)
    expect(gw.validationErrors).toEqual([])
  })

  it('an Algorand payer (USDC ASA) pays and stores; epoch 2 commits it under the keccak-derived payer; a relayer claims once', async () => {
    const data = randomBytes(2500)
    const paid = await payAlgorand(data)
    // docs/design.md: the payer is the last 20 bytes of keccak256(the 32-byte Algorand public key)
    const payer = getAddress(`0x${keccak256(algosdk.decodeAddress(algoPayer.address).publicKey).slice(-40)}`)
    const expected: Expected[] = [
      { label: 'Algorand payer', network: `algorand:${algod.genesisHash}`, payer, currency: 3, sizeBytes: data.length, paidAtomics: paid.amount, sha256: sha256Hex(data), arTxId: paid.arTxId, sender: RELAYER.privateKey },
    ]
    // (an Algorand address the ledger stored lower-cased is no base32 algosdk decodes: receipt_mapping_failed)
    expectPending(await getReceipt(paid.arTxId, `storage_deposits.payer ${depositPayerOf(paid.arTxId)}`), expected[0]!)

    const batch = await runBatchCli()
    expect(batch).toMatchObject({ epoch: 2, leafCount: 1 })
    await checkCommitted(batch, expected)
    await claimEach(batch, expected)
    expect(gw.validationErrors).toEqual([])
  })
})
