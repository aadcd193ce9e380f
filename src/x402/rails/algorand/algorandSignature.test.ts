import algosdk from 'algosdk'
import { describe, expect, it } from 'vitest'
import { algorandSignatureVerdict } from './algorandSignature.js'

// The signature of an Algorand payment is checked here, not taken on the node's word: a forged one is refused.
const sender = algosdk.generateAccount()
const other = algosdk.generateAccount()
const params = { fee: 1000n, firstValid: 10n, lastValid: 20n, genesisHash: new Uint8Array(32), genesisID: 'devnet-v1', minFee: 1000n, flatFee: true }
const transfer = () =>
  algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({ sender: sender.addr, receiver: other.addr, assetIndex: 31566704n, amount: 5_000n, suggestedParams: params })
const decode = (bytes: Uint8Array) => algosdk.decodeSignedTransaction(bytes)

describe('algorandSignatureVerdict', () => {
  it("the sender's signature is valid", () => {
    expect(algorandSignatureVerdict(decode(transfer().signTxn(sender.sk)))).toBe('valid')
  })

  it('another key signing for the sender, or a tampered signature, is invalid', () => {
    // algosdk names the other key as the auth address (`sgnr`): valid for it (the node then checks the sender is
    // rekeyed to it); without that name, the same signature does not verify for the sender
    const byOther = decode(transfer().signTxn(other.sk))
    expect(byOther.sgnr?.toString()).toBe(other.addr.toString())
    expect(algorandSignatureVerdict(new algosdk.SignedTransaction({ txn: byOther.txn, sig: byOther.sig! }))).toBe('invalid')
    const signed = decode(transfer().signTxn(sender.sk))
    const sig = new Uint8Array(signed.sig!)
    sig[0] = sig[0]! ^ 1
    expect(algorandSignatureVerdict(new algosdk.SignedTransaction({ txn: signed.txn, sig }))).toBe('invalid')
    expect(algorandSignatureVerdict(new algosdk.SignedTransaction({ txn: signed.txn }))).toBe('invalid')
  })

  it('a multisig counts when its address is the sender and its threshold of subsignatures verify', () => {
    const members = [algosdk.generateAccount(), algosdk.generateAccount(), algosdk.generateAccount()]
    const meta = { version: 1, threshold: 2, addrs: members.map((m) => m.addr) }
    const msigAddr = algosdk.multisigAddress(meta)
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({ sender: msigAddr, receiver: other.addr, assetIndex: 31566704n, amount: 5_000n, suggestedParams: params })
    const one = algosdk.signMultisigTransaction(txn, meta, members[0]!.sk).blob
    expect(algorandSignatureVerdict(decode(one))).toBe('invalid') // below the threshold
    const two = algosdk.appendSignMultisigTransaction(one, meta, members[1]!.sk).blob
    expect(algorandSignatureVerdict(decode(two))).toBe('valid')
  })

  it('a logic signature cannot be checked here', () => {
    const lsig = new algosdk.LogicSigAccount(new Uint8Array([0x06, 0x81, 0x01])) // #pragma version 6; int 1
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({ sender: lsig.address(), receiver: other.addr, assetIndex: 31566704n, amount: 5_000n, suggestedParams: params })
    expect(algorandSignatureVerdict(decode(algosdk.signLogicSigTransactionObject(txn, lsig).blob))).toBe('unverifiable')
  })
})
