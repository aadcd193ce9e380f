/**
 * Recovery of a payment claimed by an instance that died before recording its settlement,
 * played by an attacker against the devnet chain (Anvil with the EIP-3009 USDC): the payer's authorization is
 * claimed by an instance that then dies; while it is dead the payer spends the nonce without paying the service —
 * `cancelAuthorization`, or a second transfer signed with the same nonce to themselves. Recovery must record only
 * a payment whose transaction shows the Transfer of at least the amount from the payer to `payTo`.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWalletClient, http, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX, payerAccounts } from '../../devnet/accounts.js'
import { canonicalUsdc, startChain, usdcArtifact, type LocalChain } from '../../devnet/chains/startChain.js'
import { createDatabase, type DatabaseHandle } from '../../src/db/createDatabase.js'
import { newDepositId, newUploadId } from '../../src/storage/ids.js'
import { Ledger } from '../../src/storage/Ledger.js'
import { recoverOrphanedClaims } from '../../src/storage/recoverClaims.js'
import { Spool } from '../../src/storage/Spool.js'
import { LocalDirSpoolStore } from '../../src/storage/spool/LocalDirSpoolStore.js'
import { readX402Config } from '../../src/x402/config.js'
import { createAlgodClient } from '../../src/x402/rails/algorand/createAlgodClient.js'
import { createRailRegistry } from '../../src/x402/RailRegistry.js'

const PAY_TO = anvilAccount(7).address
const payer = privateKeyToAccount(payerAccounts()[0]!.privateKey)
const PRICE = 5_000n

let chain: LocalChain
let handle: DatabaseHandle
let ledger: Ledger
let spool: Spool
let dir: string
const DEAD = `dead-${randomBytes(3).toString('hex')}`

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recovery-'))
  chain = await startChain({ chainId: 8453 })
  handle = await createDatabase({ url: ':memory:' })
  ledger = new Ledger(handle.db)
  const local = new LocalDirSpoolStore(join(dir, 'shared'))
  spool = new Spool({ db: handle.db, store: local, local, tmpDir: join(dir, 'tmp'), dbMaxBytes: 1_000_000 })
  const t = Math.floor(Date.now() / 1000) - 1_000
  await handle.db.insertInto('gateway_instances').values({ instance_id: DEAD, host: 'h', pid: 1, started_at: t, heartbeat_at: t, stopped_at: null }).execute()
}, 60_000)

afterAll(async () => {
  await handle?.close()
  await chain?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const domain = () => {
  const usdc = canonicalUsdc(8453)!
  return { name: usdc.name, version: usdc.version, chainId: 8453, verifyingContract: chain.tokenAddress }
}

type Authorization = { from: Hex; to: Hex; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex }

function sign(authorization: Authorization): Promise<Hex> {
  return payer.signTypedData({
    domain: domain(),
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  })
}

/** An authorization to pay the service, claimed by the dead instance exactly as `/store` claims it. */
async function claimedByDeadInstance(): Promise<{ depositId: string; uploadId: string; authorization: Authorization; signature: Hex }> {
  const now = BigInt(Math.floor(Date.now() / 1000))
  const authorization: Authorization = { from: payer.address, to: PAY_TO, value: PRICE, validAfter: 0n, validBefore: now + 3_600n, nonce: `0x${randomBytes(32).toString('hex')}` }
  const signature = await sign(authorization)
  const depositId = newDepositId()
  const uploadId = newUploadId()
  const payload = { x402Version: 2, accepted: { scheme: 'exact', network: chain.network }, payload: { signature, authorization: { ...authorization, value: String(PRICE), validAfter: '0', validBefore: String(authorization.validBefore) } } }
  await ledger.claimWithUpload(
    { depositId, payer: payer.address, nonce: authorization.nonce, payTo: PAY_TO, network: chain.network, asset: chain.tokenAddress, scheme: 'exact', amountAtomic: PRICE, priceAtomic: PRICE, priceUsd: '0.005', resourceUrl: 'http://gw/store', paymentPayload: payload },
    { uploadId, depositId, sha256: 'aa', mimeType: 'a/b', sizeBytes: 3n, appName: 'a', payerTag: payer.address, spoolPath: null as unknown as string, owner: DEAD },
    'pending_payment',
  )
  await handle.db.updateTable('storage_uploads').set({ updated_at: Math.floor(Date.now() / 1000) - 1_000 }).where('upload_id', '=', uploadId).execute()
  return { depositId, uploadId, authorization, signature }
}

function wallet(privateKey: Hex) {
  return createWalletClient({ chain: chain.chain, transport: http(chain.url), account: privateKeyToAccount(privateKey) })
}

async function mined(hash: Hex): Promise<void> {
  const { createPublicClient } = await import('viem')
  const receipt = await createPublicClient({ chain: chain.chain, transport: http(chain.url) }).waitForTransactionReceipt({ hash, pollingInterval: 50 })
  expect(receipt.status).toBe('success')
}

const recover = () => {
  const x402 = readX402Config({ SERVICE_X402__RPC_URL__EIP155_8453: chain.url, SERVICE_ALGOD__GENESIS_HASH: 'unused' })
  return recoverOrphanedClaims({ ledger, spool, rails: createRailRegistry(x402, createAlgodClient(x402.algodUrl, '')), self: 'live', leaseS: 20 })
}

describe('recovery of a payment claimed by a dead instance (attacker: the payer)', () => {
  it('does not record a payment whose authorization the payer cancelled while the instance was dead', async () => {
    const { depositId, uploadId, authorization } = await claimedByDeadInstance()
    const cancel = await payer.signTypedData({
      domain: domain(),
      types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: authorization.nonce },
    })
    await mined(await wallet(payerAccounts()[0]!.privateKey).writeContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'cancelAuthorization', args: [payer.address, authorization.nonce, cancel] }))
    expect(await recover()).toBe(0)
    expect((await ledger.getDeposit(depositId))?.status ?? 'dropped').not.toBe('settled')
    expect((await ledger.getUploadRow(uploadId))?.status ?? 'dropped').not.toBe('queued')
  })

  it('does not record a payment whose nonce the payer spent on a transfer to themselves', async () => {
    const { depositId, uploadId, authorization } = await claimedByDeadInstance()
    // same nonce, signed again, to the payer's own second address, for 1 unit
    const own = { ...authorization, to: payerAccounts()[1]!.address, value: 1n }
    const signature = await sign(own)
    await mined(await wallet(payerAccounts()[0]!.privateKey).writeContract({
      address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'transferWithAuthorization',
      args: [own.from, own.to, own.value, own.validAfter, own.validBefore, own.nonce, signature],
    }))
    expect(await recover()).toBe(0)
    expect((await ledger.getDeposit(depositId))?.status ?? 'dropped').not.toBe('settled')
    expect((await ledger.getUploadRow(uploadId))?.status ?? 'dropped').not.toBe('queued')
  })

  it('records the payment (and its transaction) when the authorization paid the service', async () => {
    const { depositId, uploadId, authorization, signature } = await claimedByDeadInstance()
    // the facilitator settled it, then the instance died before recording
    const hash = await wallet(anvilAccount(FACILITATOR_INDEX).privateKey).writeContract({
      address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'transferWithAuthorization',
      args: [authorization.from, authorization.to, authorization.value, authorization.validAfter, authorization.validBefore, authorization.nonce, signature],
    })
    await mined(hash)
    expect(await recover()).toBe(1)
    expect(await ledger.getDeposit(depositId)).toMatchObject({ status: 'settled', tx_hash: hash })
    expect((await ledger.getUploadRow(uploadId))?.status).toBe('queued')
  })
})
