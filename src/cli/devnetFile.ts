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
  /** Where that devnet's gateway is paid (random per devnet: a gateway started from this file asks for these). */
  service?: { payToEvm?: string; payToAlgorand?: string }
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
 * A command's Arweave gateway, and when it is a devnet's, which devnet and where that devnet's gateway is paid:
 * `store` checks the gateway it pays against it (src/cli/foreignGateway.ts).
 */
export type ArweaveChoice = { url: string; devnet?: { path: string; payTo: string[] } }

/**
 * The Arweave gateway of a command given `--devnet`: the devnet's own (`storage.gatewayUrl`: `npm start` beside
 * another, on other ports, has another), unless `--arweave` or `$PAY2STORE_ARWEAVE_URL` says which.
 */
export function arweaveChoice(
  options: { devnet?: string | boolean; arweave: string },
  command: { getOptionValueSource(name: string): string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ArweaveChoice {
  if (!options.devnet || command.getOptionValueSource('arweave') === 'cli' || env.PAY2STORE_ARWEAVE_URL?.trim()) return { url: options.arweave }
  const path = devnetPath(options.devnet)
  const file = readDevnet(path)
  const url = file.storage?.gatewayUrl
  if (!url) return { url: options.arweave }
  const payTo = [file.service?.payToEvm, file.service?.payToAlgorand].filter((a): a is string => typeof a === 'string' && a !== '')
  return { url, devnet: { path, payTo } }
}
