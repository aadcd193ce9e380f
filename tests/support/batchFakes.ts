/**
 * Test helpers for the batch: ledger rows in the storage tables (as the x402-storage flow writes them)
 * and in-memory fakes of the uploader and committer. Used by tests only.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type Hex, keccak256, toHex } from 'viem'
import type { Database } from '../../src/db/Database.js'
import type { BatchCommitter, CommitResult } from '../../src/batch/BatchCommitter.js'
import type { TreeUploader } from '../../src/batch/TreeUploader.js'

export type LedgerRowInput = {
  payer: string
  network?: string
  asset?: string
  amountAtomic?: bigint
  sizeBytes?: number
  arTxId?: string
  uploadStatus?: string
  depositStatus?: string
  createdAt?: number
  /** When the upstream accepted it (default: not recorded, as rows stored before migration 0007). */
  storedAt?: number
}

export const randomArTxId = (): string => randomBytes(32).toString('base64url')

/** Inserts one deposit and its upload; returns the storage id. */
export async function insertLedgerRow(db: Kysely<Database>, r: LedgerRowInput): Promise<string> {
  const depositId = `dep_${randomUUID()}`
  const at = r.createdAt ?? 1_700_000_000
  const arTxId = r.arTxId ?? randomArTxId()
  const network = r.network ?? 'eip155:8453'
  await db
    .insertInto('storage_deposits')
    .values({
      deposit_id: depositId,
      payer: r.payer,
      nonce: toHex(randomBytes(32)),
      pay_to: '0x000000000000000000000000000000000000dEaD',
      network,
      asset: r.asset ?? '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      scheme: 'exact',
      amount_atomic: (r.amountAtomic ?? 5000n).toString(),
      price_atomic: (r.amountAtomic ?? 5000n).toString(),
      price_usd: '0.005',
      tx_hash: toHex(randomBytes(32)),
      resource_url: 'http://localhost:8000/store',
      status: r.depositStatus ?? 'settled',
      payment_payload: '{}',
      settlement: '{}',
      created_at: at,
      updated_at: at,
    })
    .execute()
  await db
    .insertInto('storage_uploads')
    .values({
      upload_id: `up_${randomUUID()}`,
      deposit_id: depositId,
      status: r.uploadStatus ?? 'stored',
      ar_tx_id: r.uploadStatus === 'queued' ? null : arTxId,
      sha256: createHash('sha256').update(arTxId).digest('hex'),
      mime_type: 'application/octet-stream',
      size_bytes: r.sizeBytes ?? 1024,
      winc: '1',
      app_name: 'test',
      payer_tag: r.payer,
      spool_path: null,
      attempts: 1,
      next_attempt_at: at,
      last_error: null,
      verify_attempts: 0,
      next_verify_at: null,
      verified_at: null,
      verify_error: null,
      stored_at: r.storedAt ?? null,
      created_at: at,
      updated_at: at,
    })
    .execute()
  return arTxId
}

export class FakeUploader implements TreeUploader {
  readonly files: { data: Uint8Array; tags: { name: string; value: string }[]; arTxId: string }[] = []
  failNext = 0
  async upload(data: Uint8Array, tags: { name: string; value: string }[]) {
    if (this.failNext > 0) {
      this.failNext--
      throw new Error('upstream down')
    }
    const arTxId = randomArTxId()
    this.files.push({ data, tags, arTxId })
    return { arTxId }
  }
}

/**
 * Commits into memory: epochs from 1, like the contract; `sent` is the chain (the i-th commit is epoch i + 1,
 * mined in block i + 1). `holdSends` makes every send wait before it reaches the chain until `releaseSends()`
 * (a slow RPC), so a test can start another run while a commit is in flight.
 */
export class FakeCommitter implements BatchCommitter {
  readonly chainId = 31337
  readonly contract = '0x00000000000000000000000000000000000BA7C4' as const
  readonly sent: { root: Hex; leafCount: number; arweaveTx: Hex; hash: Hex }[] = []
  readonly waited: Hex[] = []
  /** Every call of `send`, whether it reached the chain or not. */
  sendCalls = 0
  failSend = 0
  failWait = 0
  holdSends = false
  #held: (() => void)[] = []
  async send(root: Hex, leafCount: number, arweaveTx: Hex): Promise<Hex> {
    this.sendCalls++
    if (this.holdSends) await new Promise<void>((resolve) => this.#held.push(resolve))
    if (this.failSend > 0) {
      this.failSend--
      throw new Error('rpc down')
    }
    const hash = keccak256(toHex(`${root}:${this.sent.length}`))
    this.sent.push({ root, leafCount, arweaveTx, hash })
    return hash
  }
  /** Sends waiting for `releaseSends`. */
  get heldSends(): number {
    return this.#held.length
  }
  releaseSends(): void {
    this.holdSends = false
    for (const resolve of this.#held.splice(0)) resolve()
  }
  async wait(txHash: Hex): Promise<CommitResult> {
    this.waited.push(txHash)
    if (this.failWait > 0) {
      this.failWait--
      throw new Error('rpc timeout')
    }
    const i = this.sent.findIndex((s) => s.hash === txHash)
    if (i < 0) throw new Error(`unknown tx ${txHash}`)
    return { epoch: i + 1, txHash, blockNumber: BigInt(i + 1) }
  }
  async latestBlock(): Promise<bigint> {
    return BigInt(this.sent.length)
  }
  async findCommit(root: Hex, fromBlock: bigint | null): Promise<CommitResult | undefined> {
    const i = this.sent.findIndex((s, j) => s.root === root && BigInt(j + 1) >= (fromBlock ?? 0n))
    if (i < 0) return undefined
    return { epoch: i + 1, txHash: this.sent[i]!.hash, blockNumber: BigInt(i + 1) }
  }
}

/**
 * A committer of a run that dies mid-commit: its `send` never returns, after putting the commit on `chain`
 * (`reaches: 'chain'`: died before it recorded the hash) or not (`reaches: 'nothing'`: died before it sent).
 * `entered` resolves once the send was called.
 */
export function dyingCommitter(chain: FakeCommitter, reaches: 'chain' | 'nothing'): BatchCommitter & { entered: Promise<void> } {
  let entered!: () => void
  const committer = {
    chainId: chain.chainId,
    contract: chain.contract,
    entered: new Promise<void>((resolve) => (entered = resolve)),
    async send(root: Hex, leafCount: number, arweaveTx: Hex): Promise<Hex> {
      if (reaches === 'chain') await chain.send(root, leafCount, arweaveTx)
      entered()
      return new Promise<Hex>(() => {})
    },
    wait: (txHash: Hex) => chain.wait(txHash),
    latestBlock: () => chain.latestBlock(),
    findCommit: (root: Hex, fromBlock: bigint | null) => chain.findCommit(root, fromBlock),
  }
  return committer
}
