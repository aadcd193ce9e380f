import type { Logger } from 'pino'
import type { RailRegistry } from '../x402/RailRegistry.js'
import { claimedAuthorization } from '../x402/rails/evm/claimedAuthorization.js'
import type { Ledger } from './Ledger.js'
import type { Spool } from './Spool.js'

/**
 * Payments a dead instance had claimed but not recorded as settled — it died between the facilitator's
 * settle and its record: the payer's money may have moved with no upload to show for it. The claim's rail reads
 * the chain (`Rail.recoverClaim`; EVM: `EvmExactRail.recover`): paid — the transaction that used the authorization moved at least the
 * amount from the payer to `payTo` — is recorded now, with that transaction, and the upload queued; never
 * (cancelled, the nonce spent elsewhere, or expired unused) drops the claim and its bytes; otherwise wait.
 * Needs the rail's `SERVICE_X402__RPC_URL__*`; without it such payments wait for an operator
 * (docs/reliability.md).
 */
export async function recoverOrphanedClaims(p: { ledger: Ledger; spool: Spool; rails: RailRegistry; self: string; leaseS: number; ownBefore?: number; logger?: Logger | undefined }): Promise<number> {
  let recovered = 0
  for (const { deposit, uploadId, spoolPath } of await p.ledger.orphanedClaims(p.self, p.leaseS, { ownBefore: p.ownBefore })) {
    const rail = p.rails.byId(deposit.network)
    if (!rail?.canRecover || !rail.recoverClaim) continue
    const verdict = await rail.recoverClaim({ paymentPayloadJson: deposit.payment_payload, asset: deposit.asset, payTo: deposit.pay_to, amount: BigInt(deposit.amount_atomic) })
    if (!verdict) continue
    if (verdict.outcome === 'paid') {
      const settlement = { success: true, transaction: verdict.transaction, network: deposit.network, payer: verdict.payer, recovered: true }
      if (await p.ledger.recoverSettled(deposit.deposit_id, uploadId, verdict.transaction, settlement)) {
        recovered++
        p.logger?.warn({ deposit_id: deposit.deposit_id, upload_id: uploadId, tx_hash: verdict.transaction }, 'recovered a payment settled by an instance that died before recording it; upload queued')
      }
    } else if (verdict.outcome === 'never') {
      await p.ledger.dropUnpaid(deposit.deposit_id, uploadId)
      if (spoolPath) await p.spool.remove(spoolPath).catch(() => undefined)
      p.logger?.warn({ deposit_id: deposit.deposit_id, why: verdict.why }, 'dropped a claimed payment that never arrived')
    }
  }
  return recovered
}
