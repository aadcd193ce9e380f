import { createPublicClient, http, parseAbi } from 'viem'
import type { Logger } from 'pino'
import type { X402Config } from '../x402/config.js'
import { claimedAuthorization } from './claimedAuthorization.js'
import type { Ledger } from './Ledger.js'
import type { Spool } from './Spool.js'

const abi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
])
/** How far back the settlement's log is looked for (blocks); the tx hash is recorded when found. */
const LOG_WINDOW = 50_000n

/**
 * EVM payments a dead instance had claimed but not recorded as settled — it died between the facilitator's
 * settle and its record: the payer's money may have moved with no upload to show for it. The EIP-3009
 * authorization on the token says: used → the payment settled (recorded now, with its transaction from the
 * `AuthorizationUsed` log, and the upload queued); unused and expired → it can never settle (the claim and
 * its bytes are dropped; the nonce stays unusable at the token anyway); otherwise wait. Needs the rail's
 * `SERVICE_X402__RPC_URL__*`; without it such payments wait for an operator (docs/reliability.md).
 */
export async function recoverOrphanedClaims(p: { ledger: Ledger; spool: Spool; x402: X402Config; self: string; leaseS: number; ownBefore?: number; logger?: Logger | undefined }): Promise<number> {
  let recovered = 0
  for (const { deposit, uploadId, spoolPath } of await p.ledger.orphanedClaims(p.self, p.leaseS, { ownBefore: p.ownBefore })) {
    const rpc = p.x402.evmRpcUrls[deposit.network as 'eip155:8453' | 'eip155:1']
    if (!rpc) continue
    const auth = claimedAuthorization(deposit.payment_payload)
    if (!auth) continue
    const client = createPublicClient({ transport: http(rpc, { timeout: 10_000, retryCount: 1 }) })
    const args = [auth.from as `0x${string}`, auth.nonce as `0x${string}`] as const
    const used = await client.readContract({ address: deposit.asset as `0x${string}`, abi, functionName: 'authorizationState', args })
    if (used) {
      const latest = await client.getBlockNumber()
      const logs = await client.getLogs({
        address: deposit.asset as `0x${string}`,
        event: abi[1],
        args: { authorizer: args[0], nonce: args[1] },
        fromBlock: latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n,
        toBlock: latest,
      })
      const txHash = logs[0]?.transactionHash ?? null
      const settlement = { success: true, transaction: txHash, network: deposit.network, payer: auth.from, recovered: true }
      if (await p.ledger.recoverSettled(deposit.deposit_id, uploadId, txHash, settlement)) {
        recovered++
        p.logger?.warn({ deposit_id: deposit.deposit_id, upload_id: uploadId, tx_hash: txHash }, 'recovered a payment settled by an instance that died before recording it; upload queued')
      }
    } else if (auth.validBefore < BigInt(Math.floor(Date.now() / 1000) - 6)) {
      await p.ledger.dropUnpaid(deposit.deposit_id, uploadId)
      if (spoolPath) await p.spool.remove(spoolPath).catch(() => undefined)
      p.logger?.warn({ deposit_id: deposit.deposit_id }, 'dropped a claimed payment that never settled and can no longer settle')
    }
  }
  return recovered
}
