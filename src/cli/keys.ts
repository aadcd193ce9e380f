/**
 * Where the CLI's keys come from: each rail's client side reads its own (src/x402/rails/clientRails.ts: its key
 * options, or with `--devnet [file]` its first funded payer of a devnet.json — `npm start` writes
 * `data/devnet.json`). This file reads the devnet file and hands the rail what it reads from; a rail's failure
 * to find a key becomes the CLI's exit code here. The key itself is never printed.
 */
import { type ClientPayer, ClientPaymentError, type ClientRail } from '../x402/rails/clientRails.js'
import { CliError, EXIT, type ExitCode, unreachable } from './CliError.js'
import { devnetPath, readDevnet } from './devnetFile.js'

/** The payer of `rail`, its key read from the command's options (or the devnet file). */
export async function payerOf(rail: ClientRail, options: Record<string, unknown> & { devnet?: string | boolean }, env: NodeJS.ProcessEnv = process.env): Promise<ClientPayer> {
  const devnet = options.devnet ? { path: devnetPath(options.devnet), file: readDevnet(devnetPath(options.devnet)) } : undefined
  try {
    return await rail.payer({ options, devnet, env })
  } catch (error) {
    throw toCliError(error)
  }
}

const EXIT_OF = { no_key: EXIT.notPayable, bad_key: EXIT.usage, not_payable: EXIT.notPayable, insufficient_funds: EXIT.insufficientFunds, node_error: EXIT.server, unreachable: EXIT.unreachable } satisfies Record<ClientPaymentError['failure'], ExitCode>

/** A rail's client failure as the CLI's error (its code and exit code); anything else as it is. */
export function toCliError(error: unknown): unknown {
  if (!(error instanceof ClientPaymentError)) return error
  if (error.failure === 'unreachable' && error.url !== undefined) return unreachable(error.url, error.cause, undefined, error.hint)
  return new CliError(error.code, error.message, EXIT_OF[error.failure])
}
