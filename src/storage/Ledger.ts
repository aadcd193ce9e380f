import type { Kysely, Selectable } from 'kysely'
import { EVM_NAMESPACE } from '../x402/networks.js'
import { PaymentClaims } from '../x402/PaymentClaims.js'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'
import { isUniqueViolation } from '../db/isUniqueViolation.js'
import type { StorageDepositsTable, StorageUploadsTable } from '../db/migrations/0004_storage.js'
import type { AttestationRecord } from './VerifiedAttestor.js'
import { jsonColumn } from '../db/jsonColumn.js'
import { precompiledQuery } from '../db/precompiledQuery.js'

export type DepositRow = Selectable<StorageDepositsTable>
export type UploadRow = Selectable<StorageUploadsTable>
/** `pending_payment`: bytes spooled and (payer, nonce) claimed, settlement not yet confirmed (internal). */
export type UploadStatus = 'pending_payment' | 'queued' | 'uploading' | 'stored' | 'verified' | 'verify_failed'

export type DepositClaim = {
  depositId: string
  payer: string
  nonce: string
  payTo: string
  network: string
  asset: string
  scheme: string
  amountAtomic: bigint
  priceAtomic: bigint
  priceUsd: string
  resourceUrl: string
  paymentPayload: unknown
  /** Algorand payments are already final when claimed. */
  settled?: { txHash: string; settlement: unknown }
}

export type NewUpload = {
  uploadId: string
  depositId: string
  sha256: string
  mimeType: string
  sizeBytes: bigint
  appName: string
  payerTag: string
  /** Where the paid bytes wait (`Spool` reference: `db:…`, `shared:…` or a file path). */
  spoolPath: string
  /** The instance receiving it (the owner until stored, queued or taken over). */
  owner?: string | null
}

const now = () => Math.floor(Date.now() / 1000)

/**
 * The statuses the worker's per-tick statements act on: paid but not activated or settled
 * (`pending_payment`: orphaned claims, stale and orphaned activations), in flight (`uploading`), waiting for a
 * retry (`queued`) and waiting for verification (`stored`). Every one of those statements requires one of them.
 */
const WORKER_STATUSES: readonly UploadStatus[] = ['pending_payment', 'uploading', 'queued', 'stored']

/** EVM addresses are compared lower-cased; an Algorand address is base32 and kept as written (upper case). */
export function normalisePayer(payer: string): string {
  return payer.startsWith('0x') ? payer.toLowerCase() : payer
}

/**
 * Rows held by an instance other than `self` that is dead: its heartbeat is older than `aliveSince`, it
 * stopped, or it never registered (or nobody holds the row).
 */
function deadOwnerOf(self: string, aliveSince: number) {
  return (eb: any) =>
    eb.or([
      eb('owner_instance', 'is', null),
      eb.and([
        eb('owner_instance', '<>', self),
        eb.not(
          eb.exists(
            eb
              .selectFrom('gateway_instances')
              .select('gateway_instances.instance_id')
              .whereRef('gateway_instances.instance_id', '=', 'storage_uploads.owner_instance')
              .where('gateway_instances.heartbeat_at', '>=', aliveSince)
              .where('gateway_instances.stopped_at', 'is', null),
          ),
        ),
      ]),
    ])
}

/** Deposits and uploads of seed 2.7. Every state change is one conditional statement, safe across processes. */
export class Ledger {
  #anyWorkerUpload: (() => Promise<unknown[]>) | undefined

  constructor(readonly db: Kysely<Database>) {}

  /**
   * Whether any upload is in a state the worker's recurring statements act on (`WORKER_STATUSES`). When none
   * is, each of those statements would find nothing, so the worker skips them.
   */
  async hasWorkerUploads(): Promise<boolean> {
    // Compiled once, on first use (a Ledger is also made per transaction): the worker asks this every tick,
    // mostly of an idle ledger, where building and compiling the query would cost more than the lookup.
    // Only `status` is read, so the lookup stays inside the `storage_uploads_status` index.
    this.#anyWorkerUpload ??= precompiledQuery(this.db, 0, (q) =>
      q.selectFrom('storage_uploads').select('status').where('status', 'in', WORKER_STATUSES).limit(1),
    )
    return (await this.#anyWorkerUpload()).length > 0
  }

  /**
   * Reserves (payer, nonce) — and for an already-final payment its tx hash — before anything is settled.
   * False when the key is taken: the payload was already used (or is being used right now).
   */
  async claimDeposit(claim: DepositClaim): Promise<boolean> {
    const t = now()
    return insertedOnce(
      this.db
        .insertInto('storage_deposits')
        .values({
          deposit_id: claim.depositId,
          payer: normalisePayer(claim.payer),
          nonce: claim.nonce,
          pay_to: claim.payTo,
          network: claim.network,
          asset: claim.asset,
          scheme: claim.scheme,
          amount_atomic: claim.amountAtomic.toString(),
          price_atomic: claim.priceAtomic.toString(),
          price_usd: claim.priceUsd,
          tx_hash: claim.settled?.txHash ?? null,
          resource_url: claim.resourceUrl,
          status: claim.settled ? 'settled' : 'claimed',
          payment_payload: jsonColumn(claim.paymentPayload),
          settlement: claim.settled ? jsonColumn(claim.settled.settlement) : null,
          created_at: t,
          updated_at: t,
        })
        .onConflict((oc) => oc.doNothing()),
    )
  }

  /**
   * Claims the payment in the namespace every paid route shares (`payment_claims`: a payload a cost route holds
   * is refused here too), then the deposit, and records its upload — one database transaction; false when a
   * claim is taken.
   */
  async claimWithUpload(claim: DepositClaim, upload: NewUpload, status: UploadStatus): Promise<boolean> {
    return PaymentClaims.inTransaction(this.db, async (trx) => {
      const ledger = new Ledger(trx)
      const key = { network: claim.network, payer: claim.payer, nonce: claim.nonce, route: 'store', ref: claim.depositId }
      if (!(await PaymentClaims.claim(trx, key)) || !(await ledger.claimDeposit(claim))) throw PaymentClaims.taken
      await ledger.createUpload(upload, status)
    })
  }

  /** The payment settled: the upload may proceed. */
  async activateUpload(uploadId: string): Promise<void> {
    await this.db
      .updateTable('storage_uploads')
      .set({ status: 'uploading', updated_at: now() })
      .where('upload_id', '=', uploadId)
      .where('status', '=', 'pending_payment')
      .execute()
  }

  /** The payment was refused: nothing is kept of it (the upload row, then the claim). */
  async dropUnpaid(depositId: string, uploadId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('storage_uploads').where('upload_id', '=', uploadId).where('status', '=', 'pending_payment').execute()
      const dropped = await trx.deleteFrom('storage_deposits').where('deposit_id', '=', depositId).where('status', '=', 'claimed').executeTakeFirst()
      // the payment is free for another use only when its deposit went (a settled one stays claimed forever)
      if (Number(dropped.numDeletedRows) > 0) await PaymentClaims.release(trx, depositId)
    })
  }

  async getUploadRow(uploadId: string): Promise<UploadRow | undefined> {
    return this.db.selectFrom('storage_uploads').selectAll().where('upload_id', '=', uploadId).executeTakeFirst()
  }

  /** Records the settlement. False when that tx hash is already recorded (duplicates ignored). */
  async markSettled(depositId: string, txHash: string, settlement: unknown): Promise<boolean> {
    try {
      await this.db
        .updateTable('storage_deposits')
        .set({ status: 'settled', tx_hash: txHash, settlement: jsonColumn(settlement), updated_at: now() })
        .where('deposit_id', '=', depositId)
        .execute()
      return true
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      await this.db
        .updateTable('storage_deposits')
        .set({ status: 'settled', settlement: jsonColumn(settlement), updated_at: now() })
        .where('deposit_id', '=', depositId)
        .execute()
      return false
    }
  }

  async markSettleUnknown(depositId: string, error: string): Promise<void> {
    await this.db
      .updateTable('storage_deposits')
      .set({ status: 'settle_unknown', settlement: jsonColumn({ error }), updated_at: now() })
      .where('deposit_id', '=', depositId)
      .execute()
  }

  async createUpload(upload: NewUpload, status: UploadStatus = 'uploading'): Promise<void> {
    const t = now()
    await this.db
      .insertInto('storage_uploads')
      .values({
        upload_id: upload.uploadId,
        deposit_id: upload.depositId,
        status,
        ar_tx_id: null,
        sha256: upload.sha256,
        mime_type: upload.mimeType,
        size_bytes: Number(upload.sizeBytes),
        winc: null,
        app_name: upload.appName,
        payer_tag: upload.payerTag,
        spool_path: upload.spoolPath,
        owner_instance: upload.owner ?? null,
        attempts: 0,
        next_attempt_at: t,
        last_error: null,
        verify_attempts: 0,
        next_verify_at: null,
        verified_at: null,
        verify_error: null,
        created_at: t,
        updated_at: t,
      })
      .execute()
  }

  /**
   * Records the stored item. With `owner`, only while that instance still holds the upload: an instance
   * presumed dead (its work taken over) that wakes up records nothing. False when nothing was recorded.
   */
  async markStored(uploadId: string, arTxId: string, winc: string | null, nextVerifyAt: number, owner?: string): Promise<boolean> {
    let q = this.db
      .updateTable('storage_uploads')
      .set((eb) => ({
        status: 'stored',
        ar_tx_id: arTxId,
        winc,
        spool_path: null,
        last_error: null,
        attempts: eb('attempts', '+', 1),
        next_verify_at: nextVerifyAt,
        stored_at: now(),
        updated_at: now(),
        owner_instance: null,
      }))
      .where('upload_id', '=', uploadId)
    if (owner !== undefined) q = q.where('owner_instance', '=', owner).where('status', '=', 'uploading')
    const r = await q.executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** Back to the queue after a failed attempt; with `owner`, only while that instance holds the upload. */
  async markQueued(uploadId: string, error: string, nextAttemptAt: number, owner?: string): Promise<void> {
    let q = this.db
      .updateTable('storage_uploads')
      .set((eb) => ({ status: 'queued', owner_instance: null, last_error: error.slice(0, 500), attempts: eb('attempts', '+', 1), next_attempt_at: nextAttemptAt, updated_at: now() }))
      .where('upload_id', '=', uploadId)
    if (owner !== undefined) q = q.where('owner_instance', '=', owner).where('status', '=', 'uploading')
    await q.execute()
  }

  /**
   * Takes a queued upload for one attempt, in `owner`'s name; false when another worker took it first. One
   * conditional statement: of any number of instances racing for it, exactly one wins.
   */
  async takeQueued(uploadId: string, owner: string | null = null): Promise<boolean> {
    const r = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'uploading', owner_instance: owner, updated_at: now() })
      .where('upload_id', '=', uploadId)
      .where('status', '=', 'queued')
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async dueQueued(limit: number): Promise<UploadRow[]> {
    return this.db
      .selectFrom('storage_uploads')
      .selectAll()
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now())
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute()
  }

  /**
   * Uploads left `uploading` by a process that died go back to the queue; so do `pending_payment` uploads
   * whose deposit did settle (a crash between settlement and activation).
   */
  async requeueStale(olderThanSeconds: number): Promise<number> {
    await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, updated_at: now() })
      .where('status', '=', 'pending_payment')
      .where('updated_at', '<', now() - olderThanSeconds)
      .where('deposit_id', 'in', (eb) => eb.selectFrom('storage_deposits').select('deposit_id').where('status', '=', 'settled'))
      .execute()
    const r = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, updated_at: now() })
      .where('status', '=', 'uploading')
      .where('updated_at', '<', now() - olderThanSeconds)
      .executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  /**
   * At start: whatever this instance (same identity) held when it stopped or died is not in flight any
   * more — back to the queue now (uploads it was sending, and paid ones it had not activated yet).
   */
  async requeueOwn(owner: string): Promise<number> {
    const t = now()
    const a = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, next_attempt_at: t, updated_at: t })
      .where('owner_instance', '=', owner)
      .where('status', '=', 'uploading')
      .executeTakeFirst()
    const b = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, next_attempt_at: t, updated_at: t })
      .where('owner_instance', '=', owner)
      .where('status', '=', 'pending_payment')
      .where('deposit_id', 'in', (eb) => eb.selectFrom('storage_deposits').select('deposit_id').where('status', '=', 'settled'))
      .executeTakeFirst()
    return Number(a.numUpdatedRows) + Number(b.numUpdatedRows)
  }

  /**
   * Takes over the work of dead instances: uploads held (sending, or paid and not yet activated) by an
   * instance other than `self` whose heartbeat is older than `leaseS` (or that stopped, or never
   * registered), untouched for `leaseS`, go back to the queue — one conditional statement per state, so two
   * live instances doing this at once requeue each upload once, and only one of them then takes it.
   */
  async requeueOrphaned(self: string, leaseS: number): Promise<number> {
    const t = now()
    const deadOwner = deadOwnerOf(self, t - leaseS)
    const a = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, next_attempt_at: t, updated_at: t })
      .where('status', '=', 'uploading')
      .where('updated_at', '<', t - leaseS)
      .where(deadOwner)
      .executeTakeFirst()
    const b = await this.db
      .updateTable('storage_uploads')
      .set({ status: 'queued', owner_instance: null, next_attempt_at: t, updated_at: t })
      .where('status', '=', 'pending_payment')
      .where('updated_at', '<', t - leaseS)
      .where('deposit_id', 'in', (eb) => eb.selectFrom('storage_deposits').select('deposit_id').where('status', '=', 'settled'))
      .where(deadOwner)
      .executeTakeFirst()
    return Number(a.numUpdatedRows) + Number(b.numUpdatedRows)
  }

  /**
   * EVM payments a dead instance had claimed but not recorded as settled (it died between the facilitator's
   * settle and its record, or before): candidates for recovery from the chain.
   */
  async orphanedClaims(self: string, leaseS: number, { ownBefore, limit = 10 }: { ownBefore?: number; limit?: number } = {}): Promise<{ deposit: DepositRow; uploadId: string; spoolPath: string | null }[]> {
    const t = now()
    // ownBefore: also this identity's claims last touched before this process started (none of them is in
    // flight here: the process that made them died)
    const rows = await this.db
      .selectFrom('storage_uploads')
      .innerJoin('storage_deposits', 'storage_deposits.deposit_id', 'storage_uploads.deposit_id')
      .selectAll('storage_deposits')
      .select(['storage_uploads.upload_id', 'storage_uploads.spool_path'])
      .where('storage_uploads.status', '=', 'pending_payment')
      .where('storage_deposits.status', 'in', ['claimed', 'settle_unknown'])
      .where('storage_deposits.network', 'like', `${EVM_NAMESPACE}:%`)
      .where((eb: any) => {
        const dead = eb.and([eb('storage_uploads.updated_at', '<', t - leaseS), deadOwnerOf(self, t - leaseS)(eb)])
        if (ownBefore === undefined) return dead
        return eb.or([dead, eb.and([eb('owner_instance', '=', self), eb('storage_uploads.updated_at', '<', ownBefore)])])
      })
      .limit(limit)
      .execute()
    return rows.map(({ upload_id, spool_path, ...deposit }) => ({ deposit: deposit as DepositRow, uploadId: upload_id, spoolPath: spool_path }))
  }

  /** A claimed payment found settled on chain: record it and queue its upload (one transaction). */
  async recoverSettled(depositId: string, uploadId: string, txHash: string | null, settlement: unknown): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const d = await trx
        .updateTable('storage_deposits')
        .set({ status: 'settled', tx_hash: txHash, settlement: jsonColumn(settlement), updated_at: now() })
        .where('deposit_id', '=', depositId)
        .where('status', 'in', ['claimed', 'settle_unknown'])
        .executeTakeFirst()
      if (Number(d.numUpdatedRows) !== 1) return false
      await trx
        .updateTable('storage_uploads')
        .set({ status: 'queued', owner_instance: null, next_attempt_at: now(), updated_at: now() })
        .where('upload_id', '=', uploadId)
        .where('status', '=', 'pending_payment')
        .execute()
      return true
    })
  }

  async dueVerification(limit: number): Promise<UploadRow[]> {
    return this.db
      .selectFrom('storage_uploads')
      .selectAll()
      .where('status', '=', 'stored')
      .where('next_verify_at', '<=', now())
      .orderBy('next_verify_at')
      .limit(limit)
      .execute()
  }

  /**
   * Takes a due verification for one attempt: its next check moves to `leaseUntil`, so another instance on the
   * database passes it by (the same item is fetched from the gateway once). False when another instance took it
   * first or it is no longer due. The attempt ends by rescheduling or recording it; a dead instance's lease
   * runs out and the item is due again.
   */
  async takeVerification(uploadId: string, leaseUntil: number): Promise<boolean> {
    const r = await this.db
      .updateTable('storage_uploads')
      .set({ next_verify_at: leaseUntil })
      .where('upload_id', '=', uploadId)
      .where('status', '=', 'stored')
      .where('next_verify_at', '<=', now())
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async rescheduleVerification(uploadId: string, nextVerifyAt: number, note: string | null): Promise<void> {
    await this.db
      .updateTable('storage_uploads')
      .set((eb) => ({ next_verify_at: nextVerifyAt, verify_attempts: eb('verify_attempts', '+', 1), verify_error: note, updated_at: now() }))
      .where('upload_id', '=', uploadId)
      .where('status', '=', 'stored')
      .execute()
  }

  /** Records a verification's end; false when another instance recorded it first (the upload is no longer `stored`). */
  async recordVerification(uploadId: string, ok: boolean, error: string | null): Promise<boolean> {
    const t = now()
    const r = await this.db
      .updateTable('storage_uploads')
      .set((eb) => ({
        status: ok ? 'verified' : 'verify_failed',
        verified_at: t,
        verify_error: error,
        next_verify_at: null,
        verify_attempts: eb('verify_attempts', '+', 1),
        updated_at: t,
      }))
      .where('upload_id', '=', uploadId)
      .where('status', '=', 'stored')
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** Verified uploads not attested on chain yet whose next attempt is due. */
  async dueAttestation(limit: number): Promise<UploadRow[]> {
    const t = now()
    return this.db
      .selectFrom('storage_uploads')
      .selectAll()
      .where('status', '=', 'verified')
      .where('attest_tx_hash', 'is', null)
      .where((eb) => eb.or([eb('next_attest_at', 'is', null), eb('next_attest_at', '<=', t)]))
      .orderBy('verified_at')
      .limit(limit)
      .execute()
  }

  /**
   * Takes a due attestation for one attempt (leases it until `leaseUntil`); false when another worker took
   * it first or it is done.
   */
  async takeAttestation(uploadId: string, leaseUntil: number): Promise<boolean> {
    const t = now()
    const r = await this.db
      .updateTable('storage_uploads')
      .set({ next_attest_at: leaseUntil })
      .where('upload_id', '=', uploadId)
      .where('attest_tx_hash', 'is', null)
      .where((eb) => eb.or([eb('next_attest_at', 'is', null), eb('next_attest_at', '<=', t)]))
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** The attestation transaction and where it was sent (chain id, StorageAttest contract). */
  async recordAttestation(uploadId: string, { txHash, chainId, contract }: AttestationRecord): Promise<void> {
    await this.db
      .updateTable('storage_uploads')
      .set((eb) => ({ attest_tx_hash: txHash, attest_chain_id: chainId, attest_contract: contract, attest_error: null, next_attest_at: null, attest_attempts: eb('attest_attempts', '+', 1), updated_at: now() }))
      .where('upload_id', '=', uploadId)
      .execute()
  }

  async recordAttestationFailure(uploadId: string, error: string, nextAttemptAt: number): Promise<void> {
    await this.db
      .updateTable('storage_uploads')
      .set((eb) => ({ attest_error: error.slice(0, 500), next_attest_at: nextAttemptAt, attest_attempts: eb('attest_attempts', '+', 1), updated_at: now() }))
      .where('upload_id', '=', uploadId)
      .where('attest_tx_hash', 'is', null)
      .execute()
  }

  async getUpload(uploadId: string): Promise<{ upload: UploadRow; deposit: DepositRow } | undefined> {
    const upload = await this.db.selectFrom('storage_uploads').selectAll().where('upload_id', '=', uploadId).executeTakeFirst()
    if (!upload) return undefined
    const deposit = await this.db.selectFrom('storage_deposits').selectAll().where('deposit_id', '=', upload.deposit_id).executeTakeFirstOrThrow()
    return { upload, deposit }
  }

  /**
   * The settled uploads a payer paid for, newest first, with their deposits (the `from` of the payment;
   * EVM payers compared lower-cased). Unsettled claims and `pending_payment` uploads are left out.
   */
  async listByPayer(payer: string, limit: number): Promise<{ upload: UploadRow; deposit: DepositRow }[]> {
    const rows = await this.db
      .selectFrom('storage_uploads as u')
      .innerJoin('storage_deposits as d', 'd.deposit_id', 'u.deposit_id')
      .selectAll('u')
      .where('d.payer', '=', normalisePayer(payer))
      .where('d.status', '=', 'settled')
      .where('u.status', '!=', 'pending_payment')
      .orderBy('u.created_at', 'desc')
      .orderBy('u.upload_id', 'desc')
      .limit(limit)
      .execute()
    if (rows.length === 0) return []
    const deposits = await this.db
      .selectFrom('storage_deposits')
      .selectAll()
      .where(
        'deposit_id',
        'in',
        rows.map((r) => r.deposit_id),
      )
      .execute()
    const byId = new Map(deposits.map((d) => [d.deposit_id, d]))
    return rows.map((upload) => ({ upload, deposit: byId.get(upload.deposit_id)! }))
  }

  async getDeposit(depositId: string): Promise<DepositRow | undefined> {
    return this.db.selectFrom('storage_deposits').selectAll().where('deposit_id', '=', depositId).executeTakeFirst()
  }
}
