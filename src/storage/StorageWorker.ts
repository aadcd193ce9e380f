import type { Logger } from 'pino'
import { recoverOrphanedClaims } from './recoverClaims.js'
import { storageTags } from './signDataItem.js'
import type { StorageService } from './StorageService.js'
import { configuredAttestor, type VerifiedAttestor } from './VerifiedAttestor.js'
import { verifyStoredItem } from './verifyStoredItem.js'

export type StorageWorkerOptions = {
  service: StorageService
  logger?: Logger
  /**
   * Backstop: uploads left `uploading` longer than this go back to the queue even when their instance looks
   * alive (a stuck call; default 600 s). A dead instance's work is taken over after `leaseS`.
   */
  staleUploadingSeconds?: number
  /** An instance whose heartbeat is older than this (s) is dead: its in-flight uploads are taken over (20). */
  leaseS?: number
  batchSize?: number
  /**
   * Attests verified uploads on chain (StorageAttest); default: configured from `SERVICE_STORAGE__ATTEST*`
   * (`service.config.attest`), none when unset. `null` turns it off.
   */
  attestor?: VerifiedAttestor | null
}

const MAX_ATTEST_RETRY_S = 3600
/** How long one worker holds an attestation it is sending (a dead worker's lease lapses after it). */
const ATTEST_LEASE_S = 300
/**
 * How long a verification this instance took is its own. An instance that died mid-way (kill -9, a rolling
 * restart) leaves the item due again after it, so it is short: a verification takes milliseconds against a
 * healthy gateway, and one slower than the lease (its requests may take 60 s each) is at worst fetched twice —
 * recording it is conditional and idempotent — where a long lease left a killed verifier's item unverified for
 * minutes.
 */
const VERIFY_LEASE_S = 30

/**
 * Background jobs of paid storage: retries queued (paid, not yet stored) uploads with backoff, verifies
 * stored items against the gateway (seed 4.7) and, when configured, attests verified ones on chain
 * (StorageAttest, seed 4.8), every `SERVICE_STORAGE__WORKER_TICK_MS`.
 */
export class StorageWorker {
  readonly #service: StorageService
  readonly #logger: Logger | undefined
  readonly #stale: number
  readonly #leaseS: number
  readonly #batch: number
  #recovered = false
  /** Claims of this identity older than this (epoch s) were made by a previous process. */
  readonly #startedAtS = Math.floor(Date.now() / 1000)
  readonly #attestor: VerifiedAttestor | undefined
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #stopped = true

  constructor({ service, logger, staleUploadingSeconds = 600, leaseS = 20, batchSize = 10, attestor }: StorageWorkerOptions) {
    this.#leaseS = leaseS
    this.#service = service
    const attest = service.config.attest
    this.#attestor = attestor === null ? undefined : (attestor ?? (attest ? configuredAttestor(attest) : undefined))
    this.#logger = logger
    this.#stale = staleUploadingSeconds
    this.#batch = batchSize
  }

  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    const loop = () => {
      if (this.#stopped) return
      this.#running = this.tick()
        .then(() => undefined)
        .catch((error) => this.#logger?.error({ err: String(error) }, 'storage worker tick failed'))
        .finally(() => {
          this.#running = undefined
          if (!this.#stopped) this.#timer = setTimeout(loop, this.#service.config.workerTickMs)
        })
    }
    this.#timer = setTimeout(loop, 0)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    await this.#running
  }

  /**
   * A clean stop (rolling restarts): the uploads this instance still holds (being sent when the
   * shutdown deadline cut them, or paid and not yet activated) go back to the queue now, so a live peer takes
   * them on its next pass instead of after `leaseS`. Call after `stop()`, once this process's requests are done.
   */
  async handOver(): Promise<number> {
    const self = this.#service.instanceId
    const released = await this.#service.ledger.requeueOwn(self)
    if (released > 0) this.#logger?.warn({ uploads: released, instance: self }, 'handed this instance\'s in-flight paid uploads over to the queue at shutdown')
    return released
  }

  #creditCheckedAt = 0

  /**
   * Every `SERVICE_STORAGE__CREDIT_CHECK_INTERVAL_MS`: reads the upstream credit and, below the threshold,
   * reports it and tops up (when configured). Failures are logged; the next interval tries again.
   */
  async maintainCredit(force = false): Promise<void> {
    const service = this.#service
    if (service.missingSettings().length > 0) return
    if (!force && Date.now() - this.#creditCheckedAt < service.config.creditCheckIntervalMs) return
    this.#creditCheckedAt = Date.now()
    try {
      await service.credit.maintain()
    } catch (error) {
      this.#logger?.error({ err: String(error) }, 'upstream credit check or top-up failed')
    }
  }

  /** One pass: requeue orphans, retry due uploads, verify due items, attest verified ones (when configured). */
  async tick(): Promise<{ retried: number; verified: number; attested: number }> {
    await this.maintainCredit()
    const ledger = this.#service.ledger
    const self = this.#service.instanceId
    if (!this.#recovered) {
      // First pass after a (re)start: nothing this identity held is in flight any more.
      const own = await ledger.requeueOwn(self)
      this.#recovered = true
      if (own > 0) this.#logger?.warn({ uploads: own, instance: self }, 'requeued this instance\'s in-flight paid uploads after a restart')
    }
    // Every statement below acts only on uploads in a worker status (Ledger.hasWorkerUploads). On an idle
    // ledger they would all find nothing: one indexed lookup then replaces them (this runs every second on the
    // event loop). A row arriving after the lookup is met by the next tick, as one arriving after them would be.
    const { retried, verified } = (await ledger.hasWorkerUploads()) ? await this.#recoverRetryVerify() : { retried: 0, verified: 0 }
    const attested = await this.#attestDue()
    return { retried, verified, attested }
  }

  /** Recovers orphaned claims, requeues dead instances' and stale uploads, retries due ones, verifies due items. */
  async #recoverRetryVerify(): Promise<{ retried: number; verified: number }> {
    const ledger = this.#service.ledger
    const self = this.#service.instanceId
    // payments a dead instance (or this identity before its restart) was settling when it died: settled on
    // chain → recorded and queued here
    await recoverOrphanedClaims({ ledger, spool: this.#service.spool, rails: this.#service.rails, self, leaseS: this.#leaseS, ownBefore: this.#startedAtS, logger: this.#logger })
      .catch((error) =>
      this.#logger?.warn({ err: String(error) }, 'recovery of claimed payments failed; will retry'),
    )
    const orphaned = await ledger.requeueOrphaned(self, this.#leaseS)
    if (orphaned > 0) this.#logger?.warn({ uploads: orphaned }, 'took over paid uploads of a dead instance')
    await ledger.requeueStale(this.#stale)
    let retried = 0
    for (const row of await ledger.dueQueued(this.#batch)) {
      if (!(await ledger.takeQueued(row.upload_id, self))) continue
      try {
        const stored = await this.#service.uploadSpooled(row)
        retried++
        this.#logger?.info({ upload_id: row.upload_id, ar_tx_id: stored.arTxId }, 'queued upload stored')
      } catch (error) {
        this.#logger?.warn({ upload_id: row.upload_id, err: String(error) }, 'queued upload failed again')
      }
    }
    let verified = 0
    const { gatewayUrl, verifyIntervalMs } = this.#service.config
    for (const row of await ledger.dueVerification(this.#batch)) {
      if (!row.ar_tx_id) continue
      // another replica on this database may have read the same due row: one of them verifies it
      if (!(await ledger.takeVerification(row.upload_id, Math.floor(Date.now() / 1000) + VERIFY_LEASE_S))) continue
      const outcome = await verifyStoredItem(gatewayUrl, row.ar_tx_id, row.sha256, storageTags(row.app_name, row.sha256, row.payer_tag))
      if (outcome.state === 'pending') {
        await ledger.rescheduleVerification(row.upload_id, Math.floor(Date.now() / 1000) + Math.ceil(verifyIntervalMs / 1000), outcome.note)
      } else {
        await this.#service.recordVerification(row.upload_id, row.ar_tx_id, outcome)
        verified++
        this.#logger?.info({ upload_id: row.upload_id, ar_tx_id: row.ar_tx_id, outcome: outcome.state }, 'stored item verified')
      }
    }
    return { retried, verified }
  }

  /**
   * StorageAttest for each verified upload not attested yet (seed 4.8), one at a time (the storer's nonce is
   * read per attestation). A failure (chain down, contract not deployed yet, revert) is recorded and retried
   * with backoff. At least once: a crash between the transaction and its record attests again.
   */
  async #attestDue(): Promise<number> {
    if (!this.#attestor) return 0
    const ledger = this.#service.ledger
    let attested = 0
    for (const row of await ledger.dueAttestation(this.#batch)) {
      if (!row.ar_tx_id) continue
      const t = Math.floor(Date.now() / 1000)
      if (!(await ledger.takeAttestation(row.upload_id, t + ATTEST_LEASE_S))) continue
      try {
        const attestation = await this.#attestor.attest(row.ar_tx_id, row.sha256)
        await ledger.recordAttestation(row.upload_id, attestation)
        attested++
        this.#logger?.info(
          { upload_id: row.upload_id, ar_tx_id: row.ar_tx_id, attest_tx_hash: attestation.txHash, chain_id: attestation.chainId },
          'verified upload attested on chain',
        )
      } catch (error) {
        const retryS = Math.min(Math.ceil(this.#service.config.retryIntervalMs / 1000) * 2 ** Math.min(row.attest_attempts, 16), MAX_ATTEST_RETRY_S)
        const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
        await ledger.recordAttestationFailure(row.upload_id, message, t + retryS)
        this.#logger?.warn({ upload_id: row.upload_id, err: message, retry_in_s: retryS }, 'attestation failed; will retry')
      }
    }
    return attested
  }
}
