import type { EventSink } from '../catalogue/EventSink.js'
import type { Logger } from '../shared/logger.js'
import type { Ledger } from './Ledger.js'
import type { VerifyOutcome } from './verifyStoredItem.js'

export type UploadEventsOptions = {
  ledger: Ledger
  /** The catalogue; without one nothing is said. */
  events?: EventSink | undefined
  logger?: Logger | undefined
}

/**
 * The catalogue events of a paid upload's life (asyncapi/events.yaml): `storage.upload.stored` once its data item
 * is recorded upstream, `storage.upload.verified` once its verification ended (`warning` when it failed). The
 * caller says one only when its own record took effect, so each is said once over every instance. An event that
 * cannot be written is logged, never thrown: the upload's record is what counts.
 */
export class UploadEvents {
  readonly #o: UploadEventsOptions

  constructor(o: UploadEventsOptions) {
    this.#o = o
  }

  async stored(uploadId: string, arTxId: string): Promise<void> {
    const events = this.#o.events
    if (!events) return
    await this.#said('storage.upload.stored', async () => {
      const found = await this.#o.ledger.getUpload(uploadId)
      if (!found) return
      const { upload, deposit } = found
      await events.emit({
        kind: 'storage.upload.stored',
        payload: { upload_id: uploadId, ar_tx_id: arTxId, sha256: upload.sha256, size_bytes: Number(upload.size_bytes), network: deposit.network, payer: deposit.payer },
      })
    })
  }

  async verified(uploadId: string, arTxId: string, outcome: Exclude<VerifyOutcome, { state: 'pending' }>): Promise<void> {
    const events = this.#o.events
    if (!events) return
    const ok = outcome.state === 'verified'
    await this.#said('storage.upload.verified', () =>
      events.emit({
        kind: 'storage.upload.verified',
        severity: ok ? 'info' : 'warning',
        payload: { upload_id: uploadId, ar_tx_id: arTxId, ok, confirmations: outcome.confirmations, ...(ok ? {} : { reason: outcome.reason }) },
      }),
    )
  }

  async #said(kind: string, say: () => Promise<unknown>): Promise<void> {
    try {
      await say()
    } catch (error) {
      this.#o.logger?.error({ err: error }, `${kind} event could not be written`)
    }
  }
}
