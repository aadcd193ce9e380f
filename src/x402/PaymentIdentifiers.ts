import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'
import { PaymentHeaderInvalidError } from './errors.js'
import type { PaymentPayload } from './headers.js'

/** The 402's declaration of x402's `payment-identifier` extension (optional for the payer). */
export const paymentIdentifierExtensions: Record<string, unknown> = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) }

/**
 * The payer's payment identifier (`extensions["payment-identifier"].info.id`), validated as the extension
 * says (16–128 characters of `[A-Za-z0-9_-]`); undefined when none was sent; 400 when malformed.
 */
export function paymentIdentifierOf(payload: PaymentPayload): string | undefined {
  if (payload.extensions === undefined || payload.extensions === null) return undefined
  const { id, validation } = extractAndValidatePaymentIdentifier(payload as Parameters<typeof extractAndValidatePaymentIdentifier>[0])
  if (!validation.valid) throw new PaymentHeaderInvalidError(`extensions.${PAYMENT_IDENTIFIER}: ${(validation.errors ?? ['invalid']).join('; ')}`)
  return id ?? undefined
}

export type IdentifierUse = { scope: string; id: string; fingerprint: string; ref: string }
export type IdentifierTake = { taken: true } | { taken: false; fingerprint: string; ref: string }

/**
 * Idempotent paid requests (x402 `payment-identifier`): an identifier is taken once per scope (`/store`, a cost
 * route) with one unique insert BEFORE anything settles, so concurrent retries on any instance sharing the
 * database find it taken and get the first request's result instead of paying again.
 */
export class PaymentIdentifiers {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Takes the identifier for `use`; when someone already did, what they took it for. */
  async take(use: IdentifierUse): Promise<IdentifierTake> {
    const inserted = await insertedOnce(
      this.#db
        .insertInto('payment_identifiers')
        .values({ scope: use.scope, payment_identifier: use.id, fingerprint: use.fingerprint, ref: use.ref, created_at: Math.floor(Date.now() / 1000) })
        .onConflict((oc) => oc.doNothing()),
    )
    if (inserted) return { taken: true }
    const row = await this.#db
      .selectFrom('payment_identifiers')
      .select(['fingerprint', 'ref'])
      .where('scope', '=', use.scope)
      .where('payment_identifier', '=', use.id)
      .executeTakeFirst()
    // taken and released in between: take it now
    if (!row) return this.take(use)
    return { taken: false, fingerprint: row.fingerprint, ref: row.ref }
  }

  /** Whether someone took the identifier in `scope` at `sinceS` (epoch seconds) or later (a read: takes nothing). */
  async isTaken(scope: string, id: string, sinceS = 0): Promise<boolean> {
    const row = await this.#db
      .selectFrom('payment_identifiers')
      .select('ref')
      .where('scope', '=', scope)
      .where('payment_identifier', '=', id)
      .where('created_at', '>=', sinceS)
      .executeTakeFirst()
    return row !== undefined
  }

  /** Gives the identifier back (the request it was taken for produced nothing: the payer may retry with it). */
  async release(use: Pick<IdentifierUse, 'scope' | 'id' | 'ref'>): Promise<void> {
    await this.#db.deleteFrom('payment_identifiers').where('scope', '=', use.scope).where('payment_identifier', '=', use.id).where('ref', '=', use.ref).execute()
  }
}
