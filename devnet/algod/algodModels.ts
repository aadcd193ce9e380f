/** algod's reply models, built from the devnet ledger with algosdk's own classes. */
import algosdk from 'algosdk'
import { CONSENSUS_VERSION, USDC_ASA_ID, type AlgoLedger, type PooledTxn } from './AlgoLedger.js'

const { modelsv2 } = algosdk

export const USDC_TOTAL = 10n ** 16n // 10 billion USDC at 6 decimals

/** `GET /v2/status`: the last round and the time since it, in nanoseconds. */
export function nodeStatus(ledger: AlgoLedger): algosdk.modelsv2.NodeStatusResponse {
  const last = ledger.round
  const since = BigInt(Date.now() - (ledger.roundTimes.get(last) ?? Date.now())) * 1_000_000n
  return new modelsv2.NodeStatusResponse({
    catchupTime: 0,
    lastRound: last,
    lastVersion: CONSENSUS_VERSION,
    nextVersion: CONSENSUS_VERSION,
    nextVersionRound: last + 1n,
    nextVersionSupported: true,
    stoppedAtUnsupportedRound: false,
    timeSinceLastRound: since,
  })
}

/** `GET /v2/transactions/pending/{txid}`: a pooled transaction, confirmed or not (rewards 0 on the devnet). */
export function pendingTransaction(p: PooledTxn): algosdk.modelsv2.PendingTransactionResponse {
  const t = p.stxn.txn
  return new modelsv2.PendingTransactionResponse({
    poolError: p.poolError ?? '',
    txn: p.stxn,
    confirmedRound: p.confirmedRound,
    assetIndex: undefined,
    closingAmount: p.confirmedRound !== undefined && t.type === algosdk.TransactionType.pay ? 0 : undefined,
    assetClosingAmount: p.confirmedRound !== undefined && t.type === algosdk.TransactionType.axfer ? 0 : undefined,
    senderRewards: p.confirmedRound !== undefined ? 0 : undefined,
    receiverRewards: p.confirmedRound !== undefined ? 0 : undefined,
    closeRewards: p.confirmedRound !== undefined ? 0 : undefined,
  })
}

/** The parameters of a devnet asset: USDC, or the second test asset. */
export function assetParams(ledger: AlgoLedger, id: bigint): algosdk.modelsv2.AssetParams {
  return new modelsv2.AssetParams({
    creator: ledger.assetCreator,
    decimals: 6,
    total: USDC_TOTAL,
    defaultFrozen: false,
    ...(id === USDC_ASA_ID
      ? { name: 'USDC', unitName: 'USDC', url: 'https://www.centre.io/usdc' }
      : { name: 'Devnet Other Token', unitName: 'OTHER', url: 'https://example.invalid/devnet-other' }),
    manager: ledger.assetCreator,
    reserve: ledger.assetCreator,
  })
}
