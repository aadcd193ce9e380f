import type algosdk from 'algosdk'
import { withDeadline } from '../../../shared/withDeadline.js'
import type { X402Config } from '../../config.js'
import { LedgerNodeUnavailableError } from '../../errors.js'
import { ALGORAND_NAMESPACE } from '../../networks.js'
import type { RailRegistry } from '../../RailRegistry.js'
import { AlgorandExactRail } from './AlgorandExactRail.js'

/**
 * The Algorand `exact` rail on `algod`: its network id comes from `SERVICE_ALGOD__GENESIS_HASH` or, unset, from
 * the node (once, cached; retried after a failure).
 */
export function registerAlgorandRail(registry: RailRegistry, x402: X402Config, algod: algosdk.Algodv2): void {
  let genesis: Promise<string> | undefined = x402.algodGenesisHash ? Promise.resolve(x402.algodGenesisHash) : undefined
  const network = async () => {
    genesis ??= withDeadline(algod.getTransactionParams().do(), 10_000, 'algod')
      .then((p) => Buffer.from(p.genesisHash ?? new Uint8Array()).toString('base64'))
      .catch((error) => {
        genesis = undefined
        throw new LedgerNodeUnavailableError(error)
      })
    return `${ALGORAND_NAMESPACE}:${await genesis}`
  }
  registry.register(
    new AlgorandExactRail({
      algod,
      network,
      payTo: x402.payToAlgorand,
      algoUsdRate: x402.algoUsdRate,
      pollIntervalMs: x402.algodPollIntervalMs,
      timeoutMs: x402.algodTimeoutMs,
    }),
  )
}
