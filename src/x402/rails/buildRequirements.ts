import { ALGORAND_NETWORK } from '../networks.js'
import { exactRequirement, type PaymentRequirement, type UploadInput, uploadOffer } from '../requirements.js'
import { algorandExtra } from './algorand/algorandExtra.js'
import type { AlgoUsdRate } from './algorand/nativeAlgoAmount.js'

export type EvmRailConfig = {
  /** CAIP-2 network, `eip155:<chainId>`. */
  network: string
  /** Token contract (EIP-3009). */
  asset: string
  payTo: string
  /** EIP-712 domain of the token. */
  name: string
  version: string
}

export type AlgorandRailConfig = {
  /** `algorand:<genesis_hash>`. */
  network: string
  payTo: string
  assetId?: bigint
  /** Native ALGO counts only through this rate; undefined: refused (the requirement says so). */
  algoUsdRate?: AlgoUsdRate
}

/** An upload and the configured rails described by hand (EVM in the order of networks.ts, then Algorand). */
export type RequirementsInput = UploadInput & { evm: EvmRailConfig[]; algorand: AlgorandRailConfig }

/**
 * The requirements of the rails described in `input` (EVM rails in order, then Algorand), without a registry:
 * the same elements the registered `EvmExactRail`s and `AlgorandExactRail` build.
 */
export function buildRequirements(input: RequirementsInput): PaymentRequirement[] {
  const offer = uploadOffer(input)
  const evm = input.evm.map((rail) => exactRequirement(offer, { network: rail.network, payTo: rail.payTo, asset: rail.asset, extra: { name: rail.name, version: rail.version } }))
  const algorand = exactRequirement(offer, {
    network: input.algorand.network,
    payTo: input.algorand.payTo,
    asset: (input.algorand.assetId ?? ALGORAND_NETWORK.usdcAssetId).toString(),
    extra: algorandExtra(input.priceAtomic, input.algorand.algoUsdRate),
  })
  return [...evm, algorand]
}
