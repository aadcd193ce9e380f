import { randomBytes } from 'node:crypto'
import algosdk from 'algosdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from './algoAccounts.js'
import { AlgoLedger, OTHER_ASA_ID, USDC_ASA_ID } from './AlgoLedger.js'
import { startAlgod, type AlgodPeer } from './startAlgod.js'

const TOKEN = 'a'.repeat(64)

describe('devnet algod', () => {
  let node: AlgodPeer
  let algod: algosdk.Algodv2
  const payer = algoTestAccount(1)
  const service = algosdk.generateAccount()
  const stranger = algosdk.generateAccount()

  beforeAll(async () => {
    node = await startAlgod({
      token: TOKEN,
      roundIntervalMs: 200,
      assetCreator: algoTestAccount(0).address,
      accounts: [
        { address: payer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
        { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
      ],
    })
    const u = new URL(node.url)
    algod = new algosdk.Algodv2(TOKEN, `${u.protocol}//${u.hostname}`, u.port)
  })
  afterAll(async () => node?.close())

  it('requires the API token and serves params with the devnet genesis', async () => {
    expect((await fetch(`${node.url}/v2/status`)).status).toBe(401)
    const u = new URL(node.url)
    const bad = new algosdk.Algodv2('b'.repeat(64), `${u.protocol}//${u.hostname}`, u.port)
    await expect(bad.status().do()).rejects.toThrow(/Invalid API Token/)
    const params = await algod.getTransactionParams().do()
    expect(params.genesisID).toBe('devnet-v1')
    expect(algosdk.bytesToBase64(params.genesisHash)).toBe(node.genesisHash)
    expect(params.minFee).toBe(1000n)
    expect(node.genesisHash).toHaveLength(44)
  })

  it('an ASA transfer with a 32-byte note is confirmed; waitForConfirmation returns it with the note', async () => {
    const note = new Uint8Array(randomBytes(32))
    const params = await algod.getTransactionParams().do()
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.address,
      receiver: service.addr,
      assetIndex: USDC_ASA_ID,
      amount: 1_234_567n,
      note,
      suggestedParams: params,
    })
    const { txid } = await algod.sendRawTransaction(txn.signTxn(payer.sk)).do()
    expect(txid).toBe(txn.txID())
    const pendingNow = await algod.pendingTransactionInformation(txid).do()
    // Known at once, pending or (rounds are 200 ms; a loaded machine can take longer to ask) already confirmed.
    expect(pendingNow.txn.txn.type).toBe('axfer')
    expect(pendingNow.poolError).toBe('')
    const info = await algosdk.waitForConfirmation(algod, txid, 10)
    expect(info.confirmedRound).toBeGreaterThan(params.firstValid)
    expect(Buffer.from(info.txn.txn.note).equals(Buffer.from(note))).toBe(true)
    expect(info.txn.txn.type).toBe('axfer')
    expect(info.txn.txn.assetTransfer?.amount).toBe(1_234_567n)
    expect(info.txn.txn.assetTransfer?.receiver.toString()).toBe(service.addr.toString())
    // JSON form of the same reply
    const json = (await (await fetch(`${node.url}/v2/transactions/pending/${txid}?format=json`, { headers: { 'X-Algo-API-Token': TOKEN } })).json()) as {
      'confirmed-round': number
      txn: { txn: { note: string; xaid: number } }
    }
    expect(json['confirmed-round']).toBe(Number(info.confirmedRound))
    expect(Buffer.from(json.txn.txn.note, 'base64').equals(Buffer.from(note))).toBe(true)
    expect(json.txn.txn.xaid).toBe(31566704)
    const held = await algod.accountAssetInformation(service.addr, USDC_ASA_ID).do()
    expect(held.assetHolding?.amount).toBe(1_234_567n)
    const acct = await algod.accountInformation(payer.address).do()
    expect(acct.amount).toBe(ALGO_PAYER_MICROALGOS - 1000n)
  })

  it('a native payment confirms and moves microAlgos', async () => {
    const params = await algod.getTransactionParams().do()
    const txn = algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver: service.addr, amount: 2_000_000n, suggestedParams: params })
    const { txid } = await algod.sendRawTransaction(txn.signTxn(payer.sk)).do()
    await algosdk.waitForConfirmation(algod, txid, 10)
    expect((await algod.accountInformation(service.addr).do()).amount).toBe(3_000_000n)
  })

  it('rejects a bad signature, an overdraft, a missing opt-in, a replay and a foreign genesis', async () => {
    const params = await algod.getTransactionParams().do()
    const mk = (over: Partial<Parameters<typeof algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject>[0]> = {}) =>
      algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
        sender: payer.address, receiver: service.addr, assetIndex: USDC_ASA_ID, amount: 1n, suggestedParams: params, note: new Uint8Array(randomBytes(8)), ...over,
      })
    // signed by the wrong key
    await expect(algod.sendRawTransaction(mk().signTxn(stranger.sk)).do()).rejects.toThrow(/should have been authorized by/)
    // flipped signature byte
    const signed = algosdk.decodeSignedTransaction(mk().signTxn(payer.sk))
    const sig = new Uint8Array(signed.sig!)
    sig[0] ^= 1
    const tampered = algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: signed.txn, sig }))
    const r = await fetch(`${node.url}/v2/transactions`, { method: 'POST', headers: { 'X-Algo-API-Token': TOKEN, 'content-type': 'application/x-binary' }, body: new Uint8Array(tampered) })
    expect(r.status).toBe(400)
    expect(((await r.json()) as { message: string }).message).toMatch(/At least one signature didn't pass verification/)
    // overdraft of the ASA and of ALGO
    await expect(algod.sendRawTransaction(mk({ amount: ALGO_PAYER_USDC * 10n }).signTxn(payer.sk)).do()).rejects.toThrow(/underflow/)
    const pay = algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver: service.addr, amount: ALGO_PAYER_MICROALGOS * 2n, suggestedParams: params })
    await expect(algod.sendRawTransaction(pay.signTxn(payer.sk)).do()).rejects.toThrow(/overspend/)
    // receiver not opted in (the service holds USDC only here); an ASA the devnet never created
    await expect(algod.sendRawTransaction(mk({ receiver: stranger.addr }).signTxn(payer.sk)).do()).rejects.toThrow(/missing from/)
    await expect(algod.sendRawTransaction(mk({ assetIndex: OTHER_ASA_ID }).signTxn(payer.sk)).do()).rejects.toThrow(/asset 10458941 missing from/)
    await expect(algod.sendRawTransaction(mk({ assetIndex: 12345n }).signTxn(payer.sk)).do()).rejects.toThrow(/asset 12345 does not exist/)
    expect((await algod.getAssetByID(OTHER_ASA_ID).do()).params?.unitName).toBe('OTHER')
    // replay of an accepted transaction
    const once = mk().signTxn(payer.sk)
    await algod.sendRawTransaction(once).do()
    await expect(algod.sendRawTransaction(once).do()).rejects.toThrow(/already in ledger/)
    // another network
    const foreign = mk({ suggestedParams: { ...params, genesisHash: new Uint8Array(32).fill(9) } }).signTxn(payer.sk)
    await expect(algod.sendRawTransaction(foreign).do()).rejects.toThrow(/genesis hash mismatch/)
    // garbage
    const g = await fetch(`${node.url}/v2/transactions`, { method: 'POST', headers: { 'X-Algo-API-Token': TOKEN }, body: 'nope' })
    expect(g.status).toBe(400)
    expect((await fetch(`${node.url}/v2/transactions/pending/NOPE`, { headers: { 'X-Algo-API-Token': TOKEN } })).status).toBe(404)
  })

  it('decodes a group of concatenated transactions', async () => {
    const params = await algod.getTransactionParams().do()
    const a = algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver: service.addr, amount: 1000n, suggestedParams: params })
    const b = algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver: service.addr, amount: 2000n, suggestedParams: params })
    algosdk.assignGroupID([a, b])
    const { txid } = await algod.sendRawTransaction([a.signTxn(payer.sk), b.signTxn(payer.sk)]).do()
    expect(txid).toBe(a.txID())
    expect(AlgoLedger.decodeGroup(new Uint8Array([...a.signTxn(payer.sk), ...b.signTxn(payer.sk)]))).toHaveLength(2)
    await algosdk.waitForConfirmation(algod, b.txID(), 10)
  })
})
