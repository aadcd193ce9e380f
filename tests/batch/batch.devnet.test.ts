/**
 * Receipt batches end to end on devnet peers, the part after the paid uploads: three stored, paid
 * uploads in the storage ledger → `npm run batch` (the real CLI, as a child process) → the tree file on the
 * devnet Arweave gateway via the devnet upstream → `RootCommitted` on Anvil → each payer submits the proof
 * served by `getReceiptProof` to `attestLeaf`: accepted once, `claimed` the second time.
 * The ledger rows are written directly (as the x402-storage flow records them); the paid `POST /store`
 * part is covered by the storage issue's tests.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import {
  type Hex,
  BaseError as ViemBaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  getAbiItem,
  http,
  parseEventLogs,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ContractsDeployment, deployContracts } from '../../contracts/deploy.js'
import { anvilAccount } from '../../devnet/accounts.js'
import { type ArweaveGatewayPeer, startArweaveGateway } from '../../devnet/arweave/startArweaveGateway.js'
import { type AnvilInstance, startAnvil } from '../../devnet/chains/startAnvil.js'
import { localChain } from '../../devnet/chains/startChain.js'
import { arweaveAddress, generateArweaveJwk } from '../../devnet/testing/arweaveKey.js'
import { type UpstreamPeer, startUpstream } from '../../devnet/upstream/startUpstream.js'
import { createDatabase } from '../../src/db/createDatabase.js'
import { receiptBatchesAbi } from '../../src/batch/abi.js'
import { viemBatchCommitter } from '../../src/batch/BatchCommitter.js'
import { getReceiptProof } from '../../src/batch/getReceiptProof.js'
import { ledgerReceiptSource } from '../../src/batch/ledgerReceiptSource.js'
import { type LeafTuple, arTxIdToBytes32 } from '../../src/batch/receiptLeaf.js'
import { insertLedgerRow, randomArTxId } from '../support/batchFakes.js'
import { createTestDatabase } from '../support/testDatabase.js'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..', '..')
const payers = [anvilAccount(2), anvilAccount(3), anvilAccount(4)]
const attestor = anvilAccount(1)

let dir: string
let anvil: AnvilInstance
let up: UpstreamPeer
let gw: ArweaveGatewayPeer
let deployment: ContractsDeployment

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'batch-e2e-'))
  const jwk = await generateArweaveJwk()
  writeFileSync(join(dir, 'arweave-jwk.json'), JSON.stringify(jwk))
  anvil = await startAnvil({ chainId: 8453 })
  up = await startUpstream({ dataDir: join(dir, 'weave'), blockIntervalMs: 0, prefund: { [arweaveAddress(jwk)]: 10n ** 15n } })
  gw = await startArweaveGateway({ dataDir: join(dir, 'weave'), blockIntervalMs: 0 })
  deployment = await deployContracts({
    rpcUrl: anvil.url,
    deployerKey: anvilAccount(0).privateKey,
    roles: { attestors: [attestor.address] },
    dataDir: dir,
  })
})

afterAll(async () => {
  await gw?.close()
  await up?.close()
  await anvil?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** What `npm run batch` needs besides the database: the devnet peers, the attestor, the deployment in the data dir. */
const batchEnv = () => ({
  SERVICE_DATA_DIR: dir,
  SERVICE_BATCH__RPC_URL: anvil.url,
  SERVICE_BATCH__ATTESTOR_KEY: attestor.privateKey,
  SERVICE_STORAGE__PAYMENT_URL: up.url,
  SERVICE_STORAGE__UPLOAD_URL: up.url,
  SERVICE_STORAGE__ARWEAVE_JWK_PATH: join(dir, 'arweave-jwk.json'),
})

describe('three paid uploads → npm run batch → RootCommitted → attestLeaf once, then claimed', () => {
  it('runs end to end', async () => {
    const dbUrl = `sqlite:${join(dir, 'gateway.sqlite')}`
    const h = await createDatabase({ url: dbUrl })
    const ids: string[] = []
    try {
      for (const [i, p] of payers.entries()) {
        ids.push(await insertLedgerRow(h.db, { payer: p.address, amountAtomic: 5000n + BigInt(i), sizeBytes: 100 * (i + 1) }))
      }
    } finally {
      await h.close()
    }

    const env = { ...process.env, SERVICE_DATABASE_URL: dbUrl }
    const { stdout } = await run('npm', ['run', '--silent', 'batch', '--', '--json'], { cwd: root, env: { ...env, ...batchEnv() }, timeout: 60_000 })
    const result = JSON.parse(stdout) as { created: { epoch: number; root: Hex; leafCount: number; treeArTxId: string; commitTxHash: Hex }[] }
    expect(result.created).toHaveLength(1)
    const batch = result.created[0]!
    expect(batch).toMatchObject({ epoch: 1, leafCount: 3, status: 'committed' })

    const chain = localChain(8453, anvil.url)
    const pub = createPublicClient({ chain, transport: http(anvil.url) })

    // RootCommitted on chain, pointing at the stored tree file
    const receipt = await pub.getTransactionReceipt({ hash: batch.commitTxHash })
    const [committed] = parseEventLogs({ abi: receiptBatchesAbi, eventName: 'RootCommitted', logs: receipt.logs })
    expect(committed?.address).toBe(deployment.receiptBatches.toLowerCase())
    expect(committed?.args).toEqual({ epoch: 1n, root: batch.root, leafCount: 3n, arweaveTx: arTxIdToBytes32(batch.treeArTxId) })

    // the tree file reads back from the devnet Arweave gateway and is the committed tree
    const file = await fetch(`${gw.url}/${batch.treeArTxId}`)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toMatch(/application\/json/)
    const tree = StandardMerkleTree.load<LeafTuple>(await file.json())
    expect(tree.root).toBe(batch.root)

    // each payer claims with the served proof: accepted once, `claimed` the second time
    const db = await createDatabase({ url: dbUrl })
    try {
      for (const [i, payer] of payers.entries()) {
        const view = await getReceiptProof(db.db, ledgerReceiptSource(db.db), ids[i]!)
        expect(view.status).toBe('committed')
        expect(view.receipt.batch).toMatchObject({ epoch: 1, arweave_tx: batch.treeArTxId, root: batch.root })
        expect(view.onChain).toMatchObject({ contract: deployment.receiptBatches, chainId: 8453, commitTxHash: batch.commitTxHash })
        const r = view.receipt
        const account = privateKeyToAccount(payer.privateKey)
        const wallet = createWalletClient({ account, chain, transport: http(anvil.url) })
        const args = [
          BigInt(r.batch!.epoch),
          r.payer,
          r.ar_tx_id_bytes32,
          BigInt(r.size_bytes),
          BigInt(r.paid_atomics),
          r.currency,
          r.batch!.proof,
        ] as const
        const { request } = await pub.simulateContract({
          account,
          address: deployment.receiptBatches,
          abi: receiptBatchesAbi,
          functionName: 'attestLeaf',
          args,
        })
        const hash = await wallet.writeContract(request)
        const mined = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
        const [stored] = parseEventLogs({ abi: receiptBatchesAbi, eventName: 'Stored', logs: mined.logs })
        expect(stored?.args).toEqual({
          payer: payer.address,
          arTxid: arTxIdToBytes32(ids[i]!),
          sizeBytes: BigInt(100 * (i + 1)),
          paidAtomics: 5000n + BigInt(i),
          currency: 1,
          epoch: 1n,
        })
        const second = await pub
          .simulateContract({ account, address: deployment.receiptBatches, abi: receiptBatchesAbi, functionName: 'attestLeaf', args })
          .then(
            () => undefined,
            (err: unknown) => (err instanceof ViemBaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : err),
          )
        expect(second).toBeInstanceOf(ContractFunctionRevertedError)
        expect((second as ContractFunctionRevertedError).reason).toBe('claimed')
      }
    } finally {
      await db.close()
    }
  })
})

describe('several runs at once over one PostgreSQL (replicas, `npm run batch` beside the scheduler)', () => {
  it('three `npm run batch` started at once: one RootCommitted per root, each batch recording its own commit, all exit 0', async () => {
    const db = await createTestDatabase('postgres')
    try {
      for (const [i, p] of payers.entries()) await insertLedgerRow(db.db, { payer: p.address, amountAtomic: 7000n + BigInt(i), createdAt: 1000 + i })
      const env = { ...process.env, ...batchEnv(), SERVICE_DATABASE_URL: db.url, SERVICE_BATCH__MAX_LEAVES: '2' }
      const runs = await Promise.allSettled(
        [0, 1, 2].map(() => run('npm', ['run', '--silent', 'batch', '--', '--json'], { cwd: root, env, timeout: 90_000 })),
      )
      expect(runs.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason).slice(0, 2000))).toEqual([])

      const rows = await db.db.selectFrom('receipt_batches').selectAll().execute()
      expect(rows.map((r) => [r.status, r.leaf_count]).sort()).toEqual([
        ['committed', 1],
        ['committed', 2],
      ])
      expect(await db.db.selectFrom('batch_receipts').select('ar_tx_id').execute()).toHaveLength(3)
      const pub = createPublicClient({ chain: localChain(8453, anvil.url), transport: http(anvil.url) })
      const logs = await pub.getLogs({ address: deployment.receiptBatches, event: getAbiItem({ abi: receiptBatchesAbi, name: 'RootCommitted' }), fromBlock: 0n })
      for (const row of rows) {
        const commits = logs.filter((l) => l.args.root === row.root)
        expect(commits).toHaveLength(1)
        expect({ epoch: Number(commits[0]!.args.epoch), tx: commits[0]!.transactionHash }).toEqual({ epoch: Number(row.epoch), tx: row.commit_tx_hash })
      }
    } finally {
      await db.close()
    }
  })

  it('the viem committer finds a commit on chain by its root, from the block before it was sent', async () => {
    const committer = viemBatchCommitter({ rpcUrl: anvil.url, attestorKey: attestor.privateKey, contract: deployment.receiptBatches, chainId: 8453, pollingIntervalMs: 50 })
    const root = `0x${randomBytes(32).toString('hex')}` as Hex
    const before = await committer.latestBlock()
    expect(await committer.findCommit(root, before)).toBeUndefined()
    const tx = await committer.send(root, 1, arTxIdToBytes32(randomArTxId()))
    const mined = await committer.wait(tx)
    expect(await committer.findCommit(root, before)).toEqual(mined)
    expect(await committer.findCommit(root, null)).toEqual(mined) // no starting block: the last LOG_WINDOW blocks
    expect(await committer.findCommit(root, mined.blockNumber + 1n)).toBeUndefined()
    expect(await committer.findCommit(`0x${randomBytes(32).toString('hex')}`, before)).toBeUndefined()
  })
})
