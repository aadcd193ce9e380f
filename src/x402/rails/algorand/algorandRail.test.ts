import algosdk from 'algosdk'
import { describe, expect, it } from 'vitest'
import { checkConfirmed, parseAlgorandPayment } from './algorandRail.js'
import { InvalidPaymentError, PaymentHeaderInvalidError, RequestHashMismatchError } from '../../errors.js'
import { nativeAlgoAmount, parseAlgoUsdRate } from './nativeAlgoAmount.js'

const service = algosdk.generateAccount().addr.toString()
const payer = algosdk.generateAccount().addr.toString()
const note = new Uint8Array(32).fill(7)
const params: algosdk.SuggestedParams = {
  fee: 1000n, minFee: 1000n, firstValid: 1n, lastValid: 100n, genesisID: 'devnet-v1', genesisHash: new Uint8Array(32),
}
function confirmed(txn: algosdk.Transaction) {
  return new algosdk.modelsv2.PendingTransactionResponse({ poolError: '', txn: new algosdk.SignedTransaction({ txn }), confirmedRound: 5n })
}
const axfer = (over: { assetIndex?: bigint; amount?: bigint; receiver?: string; note?: Uint8Array } = {}) =>
  confirmed(algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: payer, receiver: over.receiver ?? service, assetIndex: over.assetIndex ?? 31566704n, amount: over.amount ?? 5000n,
    note: over.note ?? note, suggestedParams: params,
  }))
const check = { txId: 'X', payTo: service, minAmount: 5000n, expectedNotes: [note] }
const code = (fn: () => unknown) => {
  try {
    fn()
    return 'ok'
  } catch (e) {
    return (e as { code: string }).code
  }
}

describe('Algorand payment checks on a confirmed transaction', () => {
  it('accepts the USDC ASA', () => {
    expect(checkConfirmed(axfer(), check, 31566704n)).toMatchObject({ payer, amount: 5000n, asset: '31566704' })
  })
  const pay = (amount: bigint) => confirmed(algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer, receiver: service, amount, note, suggestedParams: params }))
  it('refuses native ALGO at face value: without a rate not at all, with one only the converted amount', () => {
    // no rate configured: micro-ALGO are never micro-USD
    expect(code(() => checkConfirmed(pay(6000n), check, 31566704n))).toBe('wrong_asset')
    expect(() => checkConfirmed(pay(6000n), check, 31566704n)).toThrow(expect.objectContaining({ reason: 'native_algo_not_accepted' }))
    // $0.25 per ALGO: a $0.005 price is 20,000 micro-ALGO
    const atRate = { ...check, nativeMinAmount: nativeAlgoAmount(5000n, parseAlgoUsdRate('0.25')!) }
    expect(atRate.nativeMinAmount).toBe(20_000n)
    expect(code(() => checkConfirmed(pay(6000n), atRate, 31566704n))).toBe('insufficient_amount')
    expect(code(() => checkConfirmed(pay(19_999n), atRate, 31566704n))).toBe('insufficient_amount')
    expect(checkConfirmed(pay(20_000n), atRate, 31566704n)).toMatchObject({ asset: 'ALGO', amount: 20_000n })
  })
  it('rejects a wrong asset, amount, receiver and note with distinct 402 codes', () => {
    expect(code(() => checkConfirmed(axfer({ assetIndex: 10458941n }), check, 31566704n))).toBe('wrong_asset')
    expect(code(() => checkConfirmed(axfer({ amount: 4999n }), check, 31566704n))).toBe('insufficient_amount')
    expect(code(() => checkConfirmed(axfer({ receiver: payer }), check, 31566704n))).toBe('wrong_receiver')
    expect(code(() => checkConfirmed(axfer({ note: new Uint8Array(32) }), check, 31566704n))).toBe('request_hash_mismatch')
    expect(() => checkConfirmed(axfer({ note: new Uint8Array(32) }), check, 31566704n)).toThrow(RequestHashMismatchError)
    expect(() => checkConfirmed(axfer({ amount: 1n }), check, 31566704n)).toThrow(InvalidPaymentError)
  })
  it('parses payload.txId strictly', () => {
    expect(parseAlgorandPayment({ x402Version: 2, accepted: { network: 'algorand:x' }, payload: { txId: 'A'.repeat(52) } }).txId).toHaveLength(52)
    expect(() => parseAlgorandPayment({ x402Version: 2, accepted: { network: 'algorand:x' }, payload: {} })).toThrow(PaymentHeaderInvalidError)
  })
})
