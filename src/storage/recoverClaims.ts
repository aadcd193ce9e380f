import { createPublicClient, http, parseAbi, parseEventLogs, type PublicClient } from 'viem'
import type { Logger } from 'pino'
import type { X402Config } from '../x402/config.js'
import { claimedAuthorization } from './claimedAuthorization.js'
import type { Ledger } from './Ledger.js'
import type { Spool } from './Spool.js'

const abi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
])
/** How far back the settlement's log is looked for (blocks); the tx hash is recorded when found. */
const LOG_WINDOW = 50_000n

/**
 * EVM payments a dead instance had claimed but not recorded as settled — it died between the facilitator's
 * settle and its record: the payer's money may have moved with no upload to show for it. The chain decides:
 * - the authorization is used AND the transaction that used it (its `AuthorizationUsed` log) carries a
 *   `Transfer` of the token from the payer to `payTo` of at least the claimed amount → the payment arrived:
 *   recorded now, with that transaction, and the upload queued;
 * - the nonce is spent any other way (`cancelAuthorization`, or another authorization signed with the same
 *   nonce paying someone else or less) → the payment can never arrive: the claim and its bytes are dropped.
 *   `authorizationState == true` alone proves nothing: cancelling sets it too;
 * - unused and expired → it can never settle: dropped; otherwise wait.
 * A used authorization whose log is out of the window waits for an operator. Needs the rail's
 * `SERVICE_X402__RPC_URL__*`; without it such payments wait for an operator (docs/reliability.md).
 */
export async function recoverOrphanedClaims(p: { ledger: Ledger; spool: Spool; x402: X402Config; self: string; leaseS: number; ownBefore?: number; logger?: Logger | undefined }): Promise<number> {
  let recovered = 0
  for (const { deposit, uploadId, spoolPath } of await p.ledger.orphanedClaims(p.self, p.leaseS, { ownBefore: p.ownBefore })) {
    const rpc = p.x402.evmRpcUrls[deposit.network as 'eip155:8453' | 'eip155:1']
    if (!rpc) continue
    const auth = claimedAuthorization(deposit.payment_payload)
    if (!auth) continue
    const drop = async (why: string) => {
      await p.ledger.dropUnpaid(deposit.deposit_id, uploadId)
      if (spoolPath) await p.spool.remove(spoolPath).catch(() => undefined)
      p.logger?.warn({ deposit_id: deposit.deposit_id }, `dropped a claimed payment: ${why}`)
    }
    const client = createPublicClient({ transport: http(rpc, { timeout: 10_000, retryCount: 1 }) }) as PublicClient
    const token = deposit.asset as `0x${string}`
    const args = [auth.from as `0x${string}`, auth.nonce as `0x${string}`] as const
    const used = await client.readContract({ address: token, abi, functionName: 'authorizationState', args })
    if (used) {
      const latest = await client.getBlockNumber()
      const logs = await client.getLogs({
        address: token,
        event: abi[1],
        args: { authorizer: args[0], nonce: args[1] },
        fromBlock: latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n,
        toBlock: latest,
      })
      const txHash = logs[0]?.transactionHash ?? null
      if (!txHash) {
        // Used with no AuthorizationUsed log in the window: cancelled (AuthorizationCanceled), or used long ago.
        // Neither is a payment we can show; a cancelled nonce can never pay.
        const cancelled = await client.getLogs({
          address: token,
          event: abi[3],
          args: { authorizer: args[0], nonce: args[1] },
          fromBlock: latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n,
          toBlock: latest,
        })
        if (cancelled.length > 0) await drop('the payer cancelled the authorization')
        else p.logger?.warn({ deposit_id: deposit.deposit_id }, 'claimed payment used on chain outside the log window: waits for an operator')
        continue
      }
      if (!(await paidInTransaction(client, txHash, { token, from: auth.from, payTo: deposit.pay_to, amount: BigInt(deposit.amount_atomic) }))) {
        await drop(`its nonce was spent in ${txHash} without paying ${deposit.amount_atomic} to ${deposit.pay_to}`)
        continue
      }
      const settlement = { success: true, transaction: txHash, network: deposit.network, payer: auth.from, recovered: true }
      if (await p.ledger.recoverSettled(deposit.deposit_id, uploadId, txHash, settlement)) {
        recovered++
        p.logger?.warn({ deposit_id: deposit.deposit_id, upload_id: uploadId, tx_hash: txHash }, 'recovered a payment settled by an instance that died before recording it; upload queued')
      }
    } else if (auth.validBefore < BigInt(Math.floor(Date.now() / 1000) - 6)) {
      await drop('it never settled and can no longer settle')
    }
  }
  return recovered
}

/** Whether transaction `txHash` moved at least `amount` of `token` from `from` to `payTo` (its `Transfer` logs). */
async function paidInTransaction(client: PublicClient, txHash: `0x${string}`, want: { token: string; from: string; payTo: string; amount: bigint }): Promise<boolean> {
  const receipt = await client.getTransactionReceipt({ hash: txHash })
  if (receipt.status !== 'success') return false
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
  const transfers = parseEventLogs({ abi, eventName: 'Transfer', logs: receipt.logs })
  return transfers.some((t) => same(t.address, want.token) && same(t.args.from, want.from) && same(t.args.to, want.payTo) && t.args.value >= want.amount)
}
