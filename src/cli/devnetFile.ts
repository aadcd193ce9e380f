/**
 * The devnet file `npm start` writes (`<SERVICE_DATA_DIR>/devnet.json`), as the CLI's `--devnet [file]` reads it:
 * its funded payers (src/cli/keys.ts hands them to the rails) and its peers' addresses.
 */
import { readFileSync } from 'node:fs'
import { CliError, EXIT } from './CliError.js'

export type DevnetFile = {
  gateway?: { url?: string }
  storage?: { gatewayUrl?: string; arweaveUrl?: string }
  arweave?: { url?: string }
  /** The rails' accounts and nodes, each rail reading its own. */
  [key: string]: unknown
}

/** The devnet file `--devnet [file]` names (`npm start` writes `data/devnet.json`). */
export const devnetPath = (devnet: string | boolean) => (typeof devnet === 'string' ? devnet : 'data/devnet.json')

export function readDevnet(path: string): DevnetFile {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevnetFile
  } catch (error) {
    throw new CliError('devnet_file_unreadable', `cannot read devnet file ${path}: ${(error as Error).message}`, EXIT.usage)
  }
}

/**
 * The Arweave gateway of a command given `--devnet`: the devnet's own (`storage.gatewayUrl`: `npm start` beside
 * another, on other ports, has another), unless `--arweave` or `$PAY2STORE_ARWEAVE_URL` says which.
 */
export function devnetArweave(
  options: { devnet?: string | boolean; arweave: string },
  command: { getOptionValueSource(name: string): string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (!options.devnet || command.getOptionValueSource('arweave') === 'cli' || env.PAY2STORE_ARWEAVE_URL?.trim()) return options.arweave
  return readDevnet(devnetPath(options.devnet)).storage?.gatewayUrl ?? options.arweave
}
