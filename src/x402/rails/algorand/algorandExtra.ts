import { type AlgoUsdRate, nativeAlgoAmount } from './nativeAlgoAmount.js'

/** `extra` of the Algorand requirement: the ASA is accepted; native ALGO only at the operator's rate, in the micro-ALGO stated. */
export function algorandExtra(priceAtomic: bigint, rate: AlgoUsdRate | undefined): Record<string, unknown> {
  return { requestHashBinding: true, nativeAlgo: rate ? { amount: nativeAlgoAmount(priceAtomic, rate).toString(), algoUsdRate: rate.text } : null }
}
