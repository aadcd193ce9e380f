import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'

/** One payment as every paid route names it: the network, the payer and the nonce (EIP-3009) or transaction id. */
export type PaymentKey = { network: string; payer: string; nonce: string }
export type PaymentClaim = PaymentKey & {
  /** Who holds it: `store`, or the cost route's operationId. */
  route: string
  /** The holder's row: a deposit id or a cost payment id. */
  ref: string
}

/** EVM addresses and hex nonces compare lower-cased; an Algorand address or transaction id is kept as written. */
const normalise = (v: string) => (v.startsWith('0x') ? v.toLowerCase() : v)

/**
 * The claim namespace shared by every paid route (`payment_claims`, migration 0014): one payment buys one thing,
 * whichever route claims it first. Each route claims here in the same database transaction as its own row and
 * before the facilitator hears of the payment, so a payload replayed on another route — at once, later, or
 * while the instance that claimed it is dead — finds the key taken, on any instance sharing the database.
 */
export class PaymentClaims {
  /** Takes the key for `claim`; false when any route holds it. `db` may be a transaction. */
  static async claim(db: Kysely<Database>, claim: PaymentClaim, nowSeconds = Math.floor(Date.now() / 1000)): Promise<boolean> {
    return insertedOnce(
      db
        .insertInto('payment_claims')
        .values({ network: claim.network, payer: normalise(claim.payer), nonce: normalise(claim.nonce), route: claim.route, ref: claim.ref, created_at: nowSeconds })
        .onConflict((oc) => oc.doNothing()),
    )
  }

  /**
   * Runs `work` — the route's claim here and its own row — in one database transaction; false (everything
   * rolled back) when `work` threw `PaymentClaims.taken` because a key was taken.
   */
  static async inTransaction(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    try {
      await db.transaction().execute(work)
      return true
    } catch (error) {
      if (error === PaymentClaims.taken) return false
      throw error
    }
  }

  /** Thrown inside `inTransaction` when a key is taken: rolls the transaction back. */
  static readonly taken: unique symbol = Symbol('payment claim taken')

  /** True when any route holds the key (one primary-key read). */
  static async isClaimed(db: Kysely<Database>, key: PaymentKey): Promise<boolean> {
    const row = await db
      .selectFrom('payment_claims')
      .select('ref')
      .where('network', '=', key.network)
      .where('payer', '=', normalise(key.payer))
      .where('nonce', '=', normalise(key.nonce))
      .executeTakeFirst()
    return row !== undefined
  }

  /** Gives back the claim `ref` holds (its payment was refused or produced nothing; the payer may use it again). */
  static async release(db: Kysely<Database>, ref: string): Promise<void> {
    await db.deleteFrom('payment_claims').where('ref', '=', ref).execute()
  }
}
