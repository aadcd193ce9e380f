/**
 * A rail's client side: what a paying client (the CLI) needs to pay a requirement on it — which key options it
 * reads, how it reads its key, and how it builds the payment payload the `PAYMENT-SIGNATURE` header carries
 * (signing it, or paying on its ledger first). Looked up by the requirement's network (./clientRails.ts), so
 * the CLI knows no chain family.
 */

/** One command-line option a rail reads (its key, its node); `name` is the option's camelCase key. */
export type ClientOption = {
  flags: string
  name: string
  description: string
  /** Its default, read from the environment when the program starts. */
  default?: (env: NodeJS.ProcessEnv) => string | undefined
}

/** What the CLI turns into its exit codes: the payer has no key, a malformed key, cannot pay, lacks funds, or a node failed. */
export type ClientFailure = 'no_key' | 'bad_key' | 'not_payable' | 'insufficient_funds' | 'node_error' | 'unreachable'

export class ClientPaymentError extends Error {
  override name = 'ClientPaymentError'
  readonly failure: ClientFailure
  /** The code the client reports (default: the failure; `algod_error`, say, for a node's refusal). */
  readonly code: string
  /** For `unreachable`: the node's URL, and what to do about it (which node to start, which option names it). */
  readonly url: string | undefined
  readonly hint: string | undefined

  constructor(failure: ClientFailure, message: string, o: { code?: string; url?: string; hint?: string; cause?: unknown } = {}) {
    super(message, o.cause === undefined ? undefined : { cause: o.cause })
    this.failure = failure
    this.code = o.code ?? failure
    this.url = o.url
    this.hint = o.hint
  }
}

/** An x402 requirement as the 402 lists it (the fields a client reads). */
export type ClientRequirement = { scheme: string; network: string; amount: string; asset: string; payTo: string; resource?: string; extra?: unknown; [key: string]: unknown }

/** The 402's `PaymentRequired` as the x402 client read it. */
export type ClientPaymentRequired = { x402Version: number; resource?: { url: string; [key: string]: unknown } | undefined; accepts: ClientRequirement[]; [key: string]: unknown }

export type ClientPayInput = {
  required: ClientPaymentRequired
  /** The requirement on this rail the client pays. */
  offered: ClientRequirement
  /** The rail's name as the user chose it (`--rail`), for what is printed. */
  railName: string
  /** An amount on the requirement's network as a person reads it (`0.008492 USDC`). */
  describeAmount: (amount: string, asset: string) => string
  /** The URL the payment is for (the request binding). */
  resourceUrl: string
  file: { sha256Hex: () => Promise<string>; sizeBytes: number }
  /** The largest payment the user allows, in USD (`--max-usd`). */
  maxUsd?: string | undefined
  /** Prints a line of progress. */
  say: (text: string) => void
}

/**
 * Refuses the offered quote when it is above the user's `--max-usd` (the rails' stablecoins have 6 decimals), in
 * the words of the option the user set, before anything is signed or sent.
 */
export function refuseAboveMaxUsd(input: ClientPayInput): void {
  const { amount, asset } = input.offered
  const cap = input.maxUsd ?? DEFAULT_MAX_USD
  if (Number(amount) / 1e6 > Number(cap)) {
    const price = input.describeAmount(amount, String(asset))
    const said = input.maxUsd !== undefined ? `--max-usd ${cap}` : `the default --max-usd of ${cap}; pass --max-usd <amount> to pay it`
    throw new ClientPaymentError('not_payable', `cannot pay this quote: ${price} is above ${said}`)
  }
}

/**
 * The largest payment signed when `--max-usd` is not given: the stock x402 client's own cap, said here in the
 * option's words (the library's refusal told the user to change `spendControls`, which a CLI user cannot).
 */
export const DEFAULT_MAX_USD = '1'

/**
 * The x402 payment payload to send, and who paid; `moved` when the money already moved on the rail's ledger
 * (a rail whose client pays first and names its transaction): the request not reaching the gateway leaves it paid.
 */
export type ClientPayment = { payload: { x402Version: number; accepted: ClientRequirement; [key: string]: unknown }; payer: string; moved?: boolean }

/** A rail's payer, its key read: pays requirements on the rail. */
export interface ClientPayer {
  readonly address: string
  pay(input: ClientPayInput): Promise<ClientPayment>
  /** Signs a sign-in message (`personal_sign`), where the rail's accounts can sign in to the gateway. */
  signMessage?(message: string): Promise<string>
}

/** What a rail's key reader gets: the parsed command-line options and the devnet file, when `--devnet` names one. */
export type ClientKeySource = { options: Readonly<Record<string, unknown>>; devnet: { path: string; file: unknown } | undefined; env: NodeJS.ProcessEnv }

export interface ClientRail {
  /** Whether a requirement on `network` is paid by this rail. */
  pays(network: string): boolean
  /** The options it reads (added to the commands that pay). */
  readonly options: readonly ClientOption[]
  /** Reads its key before anything is sent (no key, no point sending the file); loads what paying needs. */
  payer(source: ClientKeySource): Promise<ClientPayer>
}
