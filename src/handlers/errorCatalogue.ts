import { BaseError } from '../shared/errors/BaseError.js'
import { codedErrorAnswer, routerRefusalRows, type UnroutedResult } from '../shared/http/index.js'
import type { ErrorMapping, HandlerContext } from '../services/types.js'

/**
 * The gateway's one error table: every error a handler lets escape that carries a `code` listed here becomes
 * `status` + `Error` body `{error: code, message, details?}` (the message is the error's `shortMessage`).
 * Domains throw codes and know no HTTP. The rows of the core are below; each domain plug-in brings its own
 * (`errorRows` of its `plugin.ts`), and the app's catalogue is their union (`catalogueOf` in ./plugins.ts). A
 * code not listed is a 500 `internal_error`.
 */
export type ErrorRows = Readonly<Record<string, { readonly status: number }>>

/** What contributes rows: the core, or a plug-in (named, so a conflict says whose rows disagree). */
export type ErrorRowSource = { readonly name: string; readonly errorRows: ErrorRows }

/** The MCP tools (src/mcp): their refusals are tool results carrying these bodies; the status says which HTTP answer they mirror. */
export const mcpErrorRows = {
  invalid_arguments: { status: 400 },
  url_not_allowed: { status: 400 },
  url_fetch_failed: { status: 502 },
} as const satisfies ErrorRows

/** The core's rows: what the always-built services throw. */
export const coreErrorRows = {
  // the router's refusals (src/shared/http/routerRefusals.ts): no route (and the app's fallback), no method, an invalid request or body
  ...routerRefusalRows,
  // the pipeline's own refusals (src/pipeline/refusals.ts): the gate, the security stage, the rate limit
  auth_required: { status: 401 },
  metrics_token_required: { status: 401 },
  metrics_token_invalid: { status: 401 },
  rate_limited: { status: 429 },
  // the overlord's bearer scheme, refused by the security stage whether the shadow plug-in is built or not
  bearer_required: { status: 401 },
  bearer_invalid: { status: 401 },
  insufficient_privilege: { status: 401 },
  // login (src/auth)
  invalid_wallet: { status: 400 },
  challenge_invalid: { status: 401 },
  challenge_expired: { status: 401 },
  signature_invalid: { status: 401 },
  session_invalid: { status: 401 },
  // a session, API key or sign-in nonce that could not be checked: its store failed (CredentialsUnavailableError)
  credentials_unavailable: { status: 503 },
  // the database cannot serve now (DatabaseUnavailableError, given by the error stage to a driver's error of that kind)
  database_unavailable: { status: 503 },
  // any paid route: the x402 body and PAYMENT-REQUIRED (PaymentRequiredError)
  payment_required: { status: 402 },
  // cost endpoints
  quota_exceeded: { status: 402 },
  // x402 batch-settlement (src/x402/batch): the voucher's running total is not the server's; the 402 carries the channel's state
  invalid_batch_settlement_evm_cumulative_amount_mismatch: { status: 402 },
  batch_settlement_not_offered: { status: 503 },
  // marketplace / model server (src/marketplace, src/modelserverClient; agent_not_found, cabinet_not_found: shadow rows)
  modelserver_unavailable: { status: 502 },
  model_not_found: { status: 400 },
  model_request_invalid: { status: 400 },
  // configuration
  invalid_config: { status: 500 },
  // CabinetRollbackError: a server-side step failed and everything was restored (CabinetOperationFailed).
  cabinet_operation_failed: { status: 500 },
  ...mcpErrorRows,
} as const satisfies ErrorRows

export type ErrorDetails = Record<string, unknown>

/**
 * The union of the core's rows and the plug-ins' rows. One code means one answer: a code two sources list with
 * different statuses is refused when the catalogue is composed (at start), never settled by list order.
 */
export class ErrorCatalogue {
  readonly #statuses: ReadonlyMap<string, number>

  private constructor(statuses: ReadonlyMap<string, number>) {
    this.#statuses = statuses
  }

  static compose(sources: readonly ErrorRowSource[]): ErrorCatalogue {
    const statuses = new Map<string, number>()
    const owners = new Map<string, string>()
    for (const { name, errorRows } of sources) {
      for (const [code, { status }] of Object.entries(errorRows)) {
        const known = statuses.get(code)
        if (known !== undefined && known !== status) {
          throw new Error(`error catalogue: ${code} is ${known} in ${owners.get(code)} but ${status} in ${name}`)
        }
        statuses.set(code, status)
        if (!owners.has(code)) owners.set(code, name)
      }
    }
    return new ErrorCatalogue(statuses)
  }

  /** The status the catalogue gives `code`, or `undefined` when it has no row (a 500). */
  statusOfCode(code: string): number | undefined {
    return this.#statuses.get(code)
  }

  /** HTTP status of an error a call threw, for a usage record: its row's, 500 when not catalogued. */
  statusOf(error: unknown): number {
    return error instanceof BaseError ? (this.statusOfCode(error.code) ?? 500) : 500
  }

  /**
   * Maps a thrown error to a response, or `undefined` when it is not a catalogued `BaseError`: its row's status and
   * the plain `Error` body, or what the error's `answer` says instead (its route's body, its headers).
   */
  toResult(error: unknown): UnroutedResult | undefined {
    if (!(error instanceof BaseError)) return undefined
    const status = this.statusOfCode(error.code)
    return status === undefined ? undefined : codedErrorAnswer(error, status)
  }
}

/** The catalogue of the app serving `ctx` (every app `createApp` builds has one). */
export function errorsOf(ctx: Pick<HandlerContext, 'services'>): ErrorMapping {
  const { errors } = ctx.services
  if (!errors) throw new Error('no error catalogue: the app composes one (createApp)')
  return errors
}
