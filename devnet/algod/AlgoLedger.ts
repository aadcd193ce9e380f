/**
 * The devnet Algorand ledger: native balances (microAlgos), ASA holdings (USDC-like ASA 31566704 and a second
 * token, ASA 10458941 — what Algorand's testnet calls USDC — so a payment in the wrong asset can confirm; both
 * 6 decimals, created by the same reserve account),
 * a transaction pool and rounds. Transactions are checked like algod checks them — genesis hash/id, validity
 * window, minimum fee, group id, ed25519 signature over "TX"‖txn (or the auth address), opt-in, minimum balance
 * and overspend — against the state that will exist once every pooled transaction is applied. They are applied
 * when their round is produced (`confirmRounds` after submission).
 */
import { createHash, createPublicKey, verify } from 'node:crypto'
import algosdk from 'algosdk'
// algosdk's own msgpack codec (its pinned dependency), used only to split concatenated transactions.
import { decodeMulti, IntMode } from 'algorand-msgpack'

export const USDC_ASA_ID = 31566704n
/** A second ASA on the devnet: a real, confirmable token that is not the one the service asks for. */
export const OTHER_ASA_ID = 10458941n
/** Every ASA the devnet knows (the reserve created them all). */
export const DEVNET_ASA_IDS: readonly bigint[] = [USDC_ASA_ID, OTHER_ASA_ID]
export const MIN_FEE = 1000n
export const MIN_BALANCE = 100_000n
export const MIN_BALANCE_PER_ASSET = 100_000n
export const CONSENSUS_VERSION = 'https://github.com/algorandfoundation/specs/tree/236dcc18c9c507d794813ab768e467ea42d1b4d9'

export class TxnRejected extends Error {}

interface AccountState {
  amount: bigint
  assets: Map<bigint, bigint>
}

export interface PooledTxn {
  txid: string
  stxn: algosdk.SignedTransaction
  submittedRound: bigint
  confirmRound: bigint
  confirmedRound?: bigint
  poolError?: string
}

export interface GenesisInfo {
  id: string
  hash: Uint8Array
  hashB64: string
  json: string
}

/** Deterministic genesis: sha512/256 of the canonical genesis JSON (like algod's genesis hash). */
export function devnetGenesis(id = 'devnet-v1'): GenesisInfo {
  const json = JSON.stringify({ id, network: 'devnet', proto: CONSENSUS_VERSION, rwd: 'devnet', fees: 'devnet', timestamp: 0 })
  const hash = createHash('sha512-256').update(json).digest()
  return { id, hash: new Uint8Array(hash), hashB64: hash.toString('base64'), json }
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKey)]), format: 'der', type: 'spki' })
  return verify(null, message, key, signature)
}

function eqBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (!a || !b) return !a && !b
  return Buffer.from(a).equals(Buffer.from(b))
}

export class AlgoLedger {
  round = 1n
  readonly genesis: GenesisInfo
  private readonly accounts = new Map<string, AccountState>()
  private readonly pool = new Map<string, PooledTxn>()
  private readonly committed = new Map<string, PooledTxn>()
  readonly assetCreator: string
  readonly roundTimes = new Map<bigint, number>([[1n, Date.now()]])

  constructor(genesis: GenesisInfo, assetCreator: string, assetTotal: bigint) {
    this.genesis = genesis
    this.assetCreator = assetCreator
    this.fund(assetCreator, 10n ** 15n)
    for (const id of DEVNET_ASA_IDS) this.account(assetCreator).assets.set(id, assetTotal)
  }

  account(addr: string): AccountState {
    let a = this.accounts.get(addr)
    if (!a) {
      a = { amount: 0n, assets: new Map() }
      this.accounts.set(addr, a)
    }
    return a
  }

  peek(addr: string): AccountState | undefined {
    return this.accounts.get(addr)
  }

  fund(addr: string, microAlgos: bigint): void {
    this.account(addr).amount += microAlgos
  }

  /** Opts `addr` in to ASA `assetId` (default USDC) and moves `amount` from the creator (genesis allocation). */
  allocateAsset(addr: string, amount: bigint, assetId: bigint = USDC_ASA_ID): void {
    if (!DEVNET_ASA_IDS.includes(assetId)) throw new Error(`asset ${assetId} does not exist on the devnet`)
    const a = this.account(addr)
    if (!a.assets.has(assetId)) a.assets.set(assetId, 0n)
    if (amount > 0n) {
      const c = this.account(this.assetCreator)
      c.assets.set(assetId, (c.assets.get(assetId) ?? 0n) - amount)
      a.assets.set(assetId, (a.assets.get(assetId) ?? 0n) + amount)
    }
  }

  minBalance(a: AccountState): bigint {
    return MIN_BALANCE + MIN_BALANCE_PER_ASSET * BigInt(a.assets.size)
  }

  lookup(txid: string): PooledTxn | undefined {
    return this.pool.get(txid) ?? this.committed.get(txid)
  }

  // ---------------------------------------------------------------- checking

  /** Splits a POST body of concatenated msgpack signed transactions. */
  static decodeGroup(body: Uint8Array): algosdk.SignedTransaction[] {
    if (body.length === 0) throw new TxnRejected('empty body')
    // Re-encode each object canonically; a non-canonical encoding would not hash to its id anyway.
    const out: algosdk.SignedTransaction[] = []
    for (const obj of decodeMulti(body, { intMode: IntMode.BIGINT })) {
      out.push(algosdk.decodeSignedTransaction(algosdk.msgpackRawEncode(obj)))
    }
    if (out.length === 0) throw new TxnRejected('empty body')
    if (out.length > 16) throw new TxnRejected(`transaction group size ${out.length} exceeds 16`)
    return out
  }

  private checkStatic(stxn: algosdk.SignedTransaction, txid: string, nextRound: bigint): void {
    const t = stxn.txn
    if (!eqBytes(t.genesisHash, this.genesis.hash)) throw new TxnRejected(`transaction ${txid}: genesis hash mismatch`)
    if (t.genesisID && t.genesisID !== this.genesis.id) {
      throw new TxnRejected(`transaction ${txid}: genesis id mismatch: ${t.genesisID} != ${this.genesis.id}`)
    }
    if (nextRound < t.firstValid || nextRound > t.lastValid) {
      throw new TxnRejected(`transaction ${txid}: txn dead: round ${nextRound} outside of ${t.firstValid}--${t.lastValid}`)
    }
    if (t.lastValid - t.firstValid > 1000n) throw new TxnRejected(`transaction ${txid}: validity window longer than 1000 rounds`)
    if (t.fee < MIN_FEE) throw new TxnRejected(`transaction ${txid}: fee ${t.fee} below threshold ${MIN_FEE}`)
    if (stxn.msig || stxn.lsig || stxn.pqsig) {
      throw new TxnRejected(`transaction ${txid}: the devnet node accepts single-signature transactions only`)
    }
    if (!stxn.sig) throw new TxnRejected(`transaction ${txid}: At least one signature didn't pass verification`)
    const authorizer = this.authAddr(t.sender.toString()) ?? t.sender
    const signer = stxn.sgnr ?? t.sender
    if (signer.toString() !== authorizer.toString()) {
      throw new TxnRejected(
        `transaction ${txid}: should have been authorized by ${authorizer} but was actually authorized by ${signer}`,
      )
    }
    if (!ed25519Verify(signer.publicKey, t.bytesToSign(), stxn.sig)) {
      throw new TxnRejected(`transaction ${txid}: At least one signature didn't pass verification`)
    }
    if (t.type !== algosdk.TransactionType.pay && t.type !== algosdk.TransactionType.axfer) {
      throw new TxnRejected(`transaction ${txid}: the devnet node supports pay and axfer transactions only (got ${t.type})`)
    }
    if (t.type === algosdk.TransactionType.axfer) {
      const x = t.assetTransfer!
      if (!DEVNET_ASA_IDS.includes(x.assetIndex)) throw new TxnRejected(`transaction ${txid}: asset ${x.assetIndex} does not exist or has been deleted`)
      if (x.closeRemainderTo) throw new TxnRejected(`transaction ${txid}: asset close-out is not supported on the devnet`)
      if (x.assetSender) throw new TxnRejected(`transaction ${txid}: clawback is not supported on the devnet`)
    }
    if (t.type === algosdk.TransactionType.pay && t.payment?.closeRemainderTo) {
      throw new TxnRejected(`transaction ${txid}: account close-out is not supported on the devnet`)
    }
    if (t.rekeyTo) throw new TxnRejected(`transaction ${txid}: rekeying is not supported on the devnet`)
  }

  private authAddr(_addr: string): algosdk.Address | undefined {
    return undefined // rekeying is not supported, so the auth address is the sender
  }

  /** Applies `t` to `view` (a scratch copy) or throws TxnRejected with algod-like messages. */
  private applyTo(view: Map<string, AccountState>, t: algosdk.Transaction, txid: string): void {
    const get = (addr: string): AccountState => {
      let a = view.get(addr)
      if (!a) {
        const base = this.accounts.get(addr)
        a = { amount: base?.amount ?? 0n, assets: new Map(base?.assets ?? []) }
        view.set(addr, a)
      }
      return a
    }
    const sender = t.sender.toString()
    const s = get(sender)
    if (s.amount < t.fee) {
      throw new TxnRejected(`transaction ${txid}: overspend (account ${sender}, data {_struct:{} MicroAlgos:{Raw:${s.amount}}}, tried to spend {${t.fee}})`)
    }
    s.amount -= t.fee
    if (t.type === algosdk.TransactionType.pay) {
      const p = t.payment!
      if (s.amount < p.amount) {
        throw new TxnRejected(`transaction ${txid}: overspend (account ${sender}, data {_struct:{} MicroAlgos:{Raw:${s.amount + t.fee}}}, tried to spend {${p.amount + t.fee}})`)
      }
      s.amount -= p.amount
      const r = get(p.receiver.toString())
      r.amount += p.amount
      if (r.amount < this.minBalance(r) && r.amount > 0n) {
        throw new TxnRejected(`transaction ${txid}: account ${p.receiver} balance ${r.amount} below min ${this.minBalance(r)} (${r.assets.size} assets)`)
      }
    } else {
      const x = t.assetTransfer!
      const id = x.assetIndex
      const receiver = x.receiver.toString()
      const optIn = receiver === sender && x.amount === 0n
      if (optIn) {
        if (!s.assets.has(id)) s.assets.set(id, 0n)
      } else {
        const have = s.assets.get(id)
        if (have === undefined) throw new TxnRejected(`transaction ${txid}: asset ${id} missing from ${sender}`)
        const r = get(receiver)
        if (!r.assets.has(id)) throw new TxnRejected(`transaction ${txid}: asset ${id} missing from ${receiver}`)
        if (have < x.amount) {
          throw new TxnRejected(`transaction ${txid}: underflow on subtracting ${x.amount} from sender amount ${have}`)
        }
        s.assets.set(id, have - x.amount)
        r.assets.set(id, (r.assets.get(id) ?? 0n) + x.amount)
      }
    }
    if (s.amount < this.minBalance(s)) {
      throw new TxnRejected(`transaction ${txid}: account ${sender} balance ${s.amount} below min ${this.minBalance(s)} (${s.assets.size} assets)`)
    }
  }

  /** Validates and pools a group; returns the txid of the first transaction (as algod does). */
  submit(group: algosdk.SignedTransaction[], confirmRounds: bigint): string {
    const nextRound = this.round + 1n
    const txids = group.map((s) => s.txn.txID())
    for (const [i, s] of group.entries()) {
      const txid = txids[i] as string
      if (this.committed.has(txid)) throw new TxnRejected(`transaction already in ledger: ${txid}`)
      if (this.pool.has(txid)) throw new TxnRejected(`transaction already in ledger: ${txid}`)
      this.checkStatic(s, txid, nextRound)
    }
    if (group.length > 1) {
      const expected = algosdk.computeGroupID(
        group.map((s) => {
          const clone = algosdk.decodeUnsignedTransaction(algosdk.encodeUnsignedTransaction(s.txn))
          clone.group = undefined
          return clone
        }),
      )
      for (const [i, s] of group.entries()) {
        if (!eqBytes(s.txn.group, expected)) throw new TxnRejected(`transaction ${txids[i]}: incomplete group`)
      }
    } else if (group[0]?.txn.group && group[0].txn.group.some((b) => b !== 0)) {
      throw new TxnRejected(`transaction ${txids[0]}: incomplete group`)
    }
    // Check against the state after every pooled transaction, then this group, atomically.
    const view = new Map<string, AccountState>()
    for (const p of [...this.pool.values()].sort((a, b) => Number(a.confirmRound - b.confirmRound))) {
      try {
        this.applyTo(view, p.stxn.txn, p.txid)
      } catch {
        /* will surface as a pool error at its round */
      }
    }
    for (const [i, s] of group.entries()) this.applyTo(view, s.txn, txids[i] as string)
    const confirmRound = this.round + (confirmRounds < 1n ? 1n : confirmRounds)
    for (const [i, s] of group.entries()) {
      const txid = txids[i] as string
      this.pool.set(txid, { txid, stxn: s, submittedRound: this.round, confirmRound })
    }
    return txids[0] as string
  }

  /** Produces the next round, applying the pooled transactions that are due. */
  nextRound(): bigint {
    this.round += 1n
    this.roundTimes.set(this.round, Date.now())
    if (this.roundTimes.size > 2000) this.roundTimes.delete(this.round - 2000n)
    const due = [...this.pool.values()].filter((p) => p.confirmRound <= this.round)
    for (const p of due) {
      this.pool.delete(p.txid)
      const view = new Map<string, AccountState>()
      try {
        if (this.round > p.stxn.txn.lastValid) throw new TxnRejected(`transaction ${p.txid}: txn dead`)
        this.applyTo(view, p.stxn.txn, p.txid)
        for (const [addr, st] of view) this.accounts.set(addr, st)
        p.confirmedRound = this.round
        this.committed.set(p.txid, p)
      } catch (e) {
        p.poolError = (e as Error).message
        this.committed.set(p.txid, p)
      }
    }
    return this.round
  }
}
