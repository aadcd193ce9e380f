/**
 * The one row format of every conformance machine, the target a run is pointed at (URLs, keys, harness
 * hooks), and the result of one row. Machine files are YAML (see conformance/README.md for the format).
 */
import type { PrivateKeyAccount } from 'viem/accounts'

/** Harness hooks a row may need; a target provides some of them. */
export type Hook = 'clock' | 'restart' | 'proof_file' | 'faults' | 'login' | 'chain'
export const HOOKS: readonly Hook[] = ['clock', 'restart', 'proof_file', 'faults', 'login', 'chain']

export type Server = 'gateway' | 'modelserver'

/** What a row expects of a response (drivers read the fields they understand). */
export type Expect = {
  status?: number
  error?: string
  body?: Record<string, unknown>
  headers?: Record<string, string> | string[]
  bodyContains?: string
  bodyNotContains?: string
  bodyKeys?: string[]
  accepts?: string[]
  contentType?: string
}

/** One transition. Common fields first; the rest is the driver's vocabulary (`request`, `do`, `payment`…). */
export type Row = {
  id: string
  from: string
  event: string
  to: string
  condition?: string
  also?: string
  'x-designed'?: boolean
  /** Harness hooks the row needs; a target without one reports the row as skipped with the reason. */
  needs?: Hook[]
  /** The row holds on a stateless mock (Prism) too; an object adds request headers and replaces `expect` there. */
  mock?: boolean | { headers?: Record<string, string>; expect?: Expect }
  expect?: Expect
  [field: string]: unknown
}

export type Machine = {
  machine: string
  seed: string
  /** Which server the machine runs against. */
  server: Server
  /** Which vocabulary its rows speak (conformance/drivers/). */
  driver: string
  /** Signing keys every row needs (e.g. `overlord`); without them the rows are skipped with the reason. */
  keys?: string[]
  initial?: string
  states?: string[]
  /** Defaults of `{{var}}` placeholders (the target's `vars` win). */
  vars?: Record<string, string>
  /** Paid storage: a row with `perNetwork: true` runs once per network. */
  networks?: string[]
  rows: Row[]
  /** The file it was read from. */
  file?: string
  [field: string]: unknown
}

export type UnlockProof = { address: string; signature: string; message: string }

/** A requirement of a 402 answer; a payer turns it into a PAYMENT-SIGNATURE header value. */
export type Requirement = { network: string; amount: string; maxAmountRequired: string; payTo: string; asset: string; resource: string; description: string; mimeType: string; extra: unknown; [k: string]: unknown }
export type Payer = (requirement: Requirement, file: Uint8Array) => Promise<string>

export type Hooks = {
  /** Advances the gateway's clock by `seconds`. */
  clock?: (seconds: number) => Promise<void>
  /** Restarts the gateway (same data) with these environment overrides; `urls.gateway` may change. */
  restart?: (env?: Record<string, string>) => Promise<void>
  /** Writes (null: removes) flow A's unlock proof file the gateway reads. */
  proof_file?: (proof: UnlockProof | null) => Promise<void>
  /** Failure injection: at a cabinet provisioning step, and in the storage upstream. */
  faults?: {
    /** The `at`-th cabinet provisioning step from now fails (0: the next); `undefined` disarms. */
    cabinetStep?: (at: number | undefined) => Promise<void>
    /** The storage upstream's uploads fail (503) until `recover`. */
    upstream?: (what: 'fail' | 'recover') => Promise<void>
  }
  /** The gateway serves wallet login (a live session token can be obtained). */
  login?: boolean
  /**
   * Pays x402 requirements, by network pattern (`eip155:8453`, `algorand:*`); `rpcs`: the JSON-RPC of each EVM
   * network the payer pays on (`eip155:8453` → URL), for the rows whose client reads the chain (batch settlement).
   */
  chain?: { payers: Record<string, Payer>; rpcs?: Record<string, string> }
}

export type Target = {
  urls: Partial<Record<Server, string>>
  /** A stateless mock (Prism): only rows marked `mock` run. */
  mock?: boolean
  /** Named signing keys (`overlord`, `payer`, …). */
  keys: Record<string, PrivateKeyAccount>
  vars?: Record<string, string>
  hooks: Hooks
  /** Sees every response (a key-leak sweep collects them). */
  onResponse?: (response: { server: Server; method: string; path: string; status: number; text: string }) => void
}

/** One HTTP exchange of a row, as the report shows it. */
export type Exchange = {
  server: Server
  method: string
  path: string
  requestHeaders?: Record<string, string>
  requestBody?: string
  status?: number
  responseBody?: string
  /** Where the response does not match the document. */
  schemaErrors: string[]
}

export type Outcome = 'passed' | 'failed' | 'skipped'

export type RowResult = {
  machine: string
  seed: string
  id: string
  /** Paid storage: the network of this run of the row. */
  variant?: string
  from: string
  event: string
  to: string
  outcome: Outcome
  /** Why a row was skipped. */
  reason?: string
  problems: string[]
  expected?: unknown
  exchanges: Exchange[]
  ms: number
}
