/**
 * The verifier attests each verified upload through StorageAttest (seed 4.8) when
 * `SERVICE_STORAGE__ATTESTOR_KEY` is set, on the devnet's local Base (Anvil). The gateway starts before the
 * contracts are deployed (as under `npm start`): the first attempts fail, are recorded and retried, and the
 * attestation lands once `contracts-8453.json` appears in the data dir.
 */
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createPublicClient, getAddress, http, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployContracts } from '../../contracts/deploy.js'
import { anvilAccount } from '../../devnet/accounts.js'
import { storageAttestAbi } from '../../src/batch/abi.js'
import { arTxIdToBytes32 } from '../../src/batch/receiptLeaf.js'
import { evmEnv, type EvmPeers, payAndStoreOk, startEvmPeers, startAppGateway, type TestGateway, waitForVerification } from './harness.js'

const STORER = anvilAccount(6)
let peers: EvmPeers
let gw: TestGateway
let dataDir: string

beforeAll(async () => {
  peers = await startEvmPeers()
  dataDir = join(peers.dir, 'attest-data')
  gw = await startAppGateway(
    { ...evmEnv(peers), SERVICE_DATA_DIR: dataDir, SERVICE_STORAGE__ATTESTOR_KEY: STORER.privateKey, SERVICE_STORAGE__ATTEST_RPC_URL: peers.base.url },
    peers.dir,
  )
  gw.worker.start()
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

async function waitForAttestation(arTxId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await gw.ledger.db.selectFrom('storage_uploads').selectAll().where('ar_tx_id', '=', arTxId).executeTakeFirstOrThrow()
    if (row.attest_tx_hash || Date.now() > deadline) return row
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('StorageAttest from the verifier (Anvil)', () => {
  it('a verified upload is attested on chain once the contract is deployed; the tx hash is recorded', async () => {
    const data = randomBytes(2500)
    const sha = createHash('sha256').update(data).digest('hex')
    const before = Math.floor(Date.now() / 1000)
    const { arTxId } = await payAndStoreOk(gw.url, peers.base, 2, data)
    const verified = await waitForVerification(gw.ledger, arTxId)
    expect(verified.status).toBe('verified')
    expect(Number(verified.stored_at)).toBeGreaterThanOrEqual(before)
    expect(Number(verified.stored_at)).toBeGreaterThanOrEqual(Number(verified.created_at))

    // no deployment yet: the attempt fails, is recorded, and is retried
    const deadline = Date.now() + 10_000
    let row = verified
    while (!row.attest_error && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      row = await gw.ledger.db.selectFrom('storage_uploads').selectAll().where('ar_tx_id', '=', arTxId).executeTakeFirstOrThrow()
    }
    expect(row.attest_error).toMatch(/no StorageAttest address/)
    expect(row.attest_tx_hash).toBeNull()

    const deployment = await deployContracts({ rpcUrl: peers.base.url, deployerKey: anvilAccount(0).privateKey, dataDir })
    const attested = await waitForAttestation(arTxId)
    expect(attested.attest_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(attested.attest_error).toBeNull()

    const pub = createPublicClient({ transport: http(peers.base.url) })
    const receipt = await pub.getTransactionReceipt({ hash: attested.attest_tx_hash as `0x${string}` })
    expect(receipt.status).toBe('success')
    expect(receipt.to?.toLowerCase()).toBe(deployment.storageAttest.toLowerCase())
    const [event] = parseEventLogs({ abi: storageAttestAbi, eventName: 'StorageVerified', logs: receipt.logs })
    expect(event?.args).toMatchObject({ storer: STORER.address, txid: arTxIdToBytes32(arTxId), sha256Expected: `0x${sha}`, nonce: 0n })
    // the upload state shows where it was attested
    const view = await gw.service.getUpload(attested.upload_id)
    expect(view.attestation).toEqual({ tx_hash: attested.attest_tx_hash, chain_id: 8453, contract: getAddress(deployment.storageAttest) })

    // the next verified upload is attested with the storer's next nonce
    const second = await payAndStoreOk(gw.url, peers.base, 3, randomBytes(1800))
    const next = await waitForAttestation(second.arTxId)
    expect(next.status).toBe('verified')
    const r2 = await pub.getTransactionReceipt({ hash: next.attest_tx_hash as `0x${string}` })
    expect(parseEventLogs({ abi: storageAttestAbi, eventName: 'StorageVerified', logs: r2.logs })[0]?.args.nonce).toBe(1n)
  })

  it('without SERVICE_STORAGE__ATTESTOR_KEY nothing is attested', async () => {
    const plain = await startAppGateway(evmEnv(peers), peers.dir)
    try {
      plain.worker.start()
      const { arTxId } = await payAndStoreOk(plain.url, peers.base, 4, randomBytes(1000))
      const row = await waitForVerification(plain.ledger, arTxId)
      expect(row.status).toBe('verified')
      await new Promise((r) => setTimeout(r, 500))
      const after = await plain.ledger.db.selectFrom('storage_uploads').selectAll().where('ar_tx_id', '=', arTxId).executeTakeFirstOrThrow()
      expect(after).toMatchObject({ attest_tx_hash: null, attest_attempts: 0, attest_error: null })
      expect(plain.validationErrors).toEqual([])
    } finally {
      await plain.close()
    }
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})
