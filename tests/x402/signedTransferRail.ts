/**
 * A fourth payment rail, in one file: scheme `exact` on a local chain's CAIP-2 network (`eip155:<chainId>`, a
 * chain id no configured rail uses) whose payment is a native-coin transfer (asset `0`) the payer signs but does
 * not send. The gateway checks it locally (signer,
 * receiver, amount, chain) and settles it by broadcasting the transfer on the chain (an Anvil devnet). It knows
 * nothing of the gateway beyond `src/x402/rails/Rail.ts`, and is registered with one call.
 */
import { type Chain, createPublicClient, http, type Hex, parseTransaction, recoverTransactionAddress, type TransactionSerializedLegacy } from 'viem'
import { InvalidPaymentError, PaymentReplayedError } from '../../src/x402/errors.js'
import type { DecodedPaymentHeader } from '../../src/x402/headers.js'
import type { RailPlugin } from '../../src/x402/RailRegistry.js'
import type { DepositBook, HeldPayment, HeldSettlement, Rail, RailBelief, RailOffer, RailSettled, RailSettleInput, PrecheckContext } from '../../src/x402/rails/Rail.js'
import { exactRequirement, type PaymentRequirement } from '../../src/x402/requirements.js'

/** The chain's own coin (the document's assets are contracts or numeric ids). */
const NATIVE = '0'

export type SignedTransferRailOptions = { chain: Chain; rpcUrl: string; payTo: `0x${string}` }

/** The payer's signed, unsent transfer (`payload.signedTransfer`) and who signed it. */
type Transfer = { raw: Hex; from: string; to: string; value: bigint; nonce: string }

export class SignedTransferRail implements Rail {
  readonly scheme = 'exact' as const
  readonly settlement = 'authorize-then-settle' as const
  readonly label = 'Native coin on the devnet chain'
  readonly id: string
  readonly canRecover = false
  readonly #o: SignedTransferRailOptions
  readonly #client

  constructor(o: SignedTransferRailOptions) {
    this.#o = o
    this.id = `eip155:${o.chain.id}`
    this.#client = createPublicClient({ chain: o.chain, transport: http(o.rpcUrl) })
  }

  async network(): Promise<string> {
    return this.id
  }
  missingSettings(): string[] {
    return []
  }
  async requirement(offer: RailOffer): Promise<PaymentRequirement> {
    return this.requirementOf(offer)
  }
  requirementOf(offer: RailOffer): PaymentRequirement {
    return exactRequirement(offer, { network: this.id, payTo: this.#o.payTo, asset: NATIVE, extra: null })
  }
  currencyCode(): number | undefined {
    return undefined
  }
  normalisePayer(payer: string): string {
    return payer.toLowerCase()
  }

  async precheck(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, ctx: PrecheckContext): Promise<RailBelief> {
    const t = await this.#transfer(decoded, requirement)
    await ctx.assertUnclaimed(t.from, t.nonce)
    return { verified: true, release: () => {} }
  }
  checkAmount(decoded: DecodedPaymentHeader, requirement: PaymentRequirement): void {
    const value = parseTransaction(this.#raw(decoded) as TransactionSerializedLegacy).value ?? 0n
    if (value < BigInt(requirement.amount)) throw new InvalidPaymentError('amount_insufficient', `transfer of ${value} below ${requirement.amount}`)
  }

  async settle({ decoded, requirement }: RailSettleInput, book: DepositBook): Promise<RailSettled> {
    const t = await this.#transfer(decoded, requirement)
    const depositId = await book.claim({ payer: t.from, nonce: t.nonce, asset: NATIVE, amountAtomic: t.value, payerTag: t.from })
    if (depositId === undefined) throw new PaymentReplayedError()
    try {
      const transaction = await this.#broadcast(t.raw)
      const settlement = { success: true, transaction, network: this.id, payer: t.from }
      await book.markSettled(depositId, transaction, settlement)
      await book.activate()
      return { depositId, payerTag: t.from, settlement }
    } catch (error) {
      await book.dropUnpaid(depositId)
      throw error
    }
  }

  authorize(decoded: DecodedPaymentHeader, requirement: PaymentRequirement): HeldPayment {
    const tx = parseTransaction(this.#raw(decoded) as TransactionSerializedLegacy)
    this.checkAmount(decoded, requirement)
    // the payer states who it is; verifyHeld recovers the signer (asynchronously) and refuses another
    const from = decoded.payload.payload.from
    if (typeof from !== 'string' || from === '') throw new InvalidPaymentError('malformed_signature', 'payload.from must name the payer')
    return { payer: from, nonce: `${tx.nonce ?? 0}`, amount: tx.value ?? 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600) }
  }
  async verifyHeld(_f: unknown, decoded: DecodedPaymentHeader, requirement: PaymentRequirement, payment: HeldPayment): Promise<{ isValid: boolean; invalidReason?: string }> {
    const t = await this.#transfer(decoded, requirement).catch(() => undefined)
    return t && t.from.toLowerCase() === payment.payer.toLowerCase() ? { isValid: true } : { isValid: false, invalidReason: 'signer_mismatch' }
  }
  async settleHeld(_f: unknown, decoded: DecodedPaymentHeader, requirement: PaymentRequirement): Promise<HeldSettlement> {
    const t = await this.#transfer(decoded, requirement)
    return { success: true, transaction: await this.#broadcast(t.raw), network: this.id, payer: t.from }
  }

  #raw(decoded: DecodedPaymentHeader): Hex {
    const raw = decoded.payload.payload.signedTransfer
    if (typeof raw !== 'string' || !raw.startsWith('0x')) throw new InvalidPaymentError('malformed_signature', 'payload.signedTransfer must be a signed transaction')
    return raw as Hex
  }

  /** The transfer, checked here: signed by its payer, on this chain, to `payTo`, of at least the amount. */
  async #transfer(decoded: DecodedPaymentHeader, requirement: PaymentRequirement): Promise<Transfer> {
    const raw = this.#raw(decoded)
    const tx = parseTransaction(raw as TransactionSerializedLegacy)
    if (tx.chainId !== this.#o.chain.id) throw new InvalidPaymentError('network_mismatch', 'the transfer is for another chain')
    if (tx.to?.toLowerCase() !== requirement.payTo.toLowerCase()) throw new InvalidPaymentError('pay_to_mismatch', 'the transfer pays someone else')
    this.checkAmount(decoded, requirement)
    const from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerializedLegacy })
    return { raw, from, to: tx.to, value: tx.value ?? 0n, nonce: `${tx.nonce ?? 0}` }
  }

  async #broadcast(raw: Hex): Promise<string> {
    const hash = await this.#client.sendRawTransaction({ serializedTransaction: raw })
    const receipt = await this.#client.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new InvalidPaymentError('settlement_failed', `transfer ${hash} reverted`)
    return hash
  }
}

/** Its registration: one call. */
export const signedTransferRail = (o: SignedTransferRailOptions): RailPlugin => (registry) => registry.register(new SignedTransferRail(o))
