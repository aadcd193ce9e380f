/**
 * Where the CLI's keys come from: an environment variable (`--key-env`, default `PAY2STORE_PRIVATE_KEY`),
 * or with `--devnet [file]` the first funded payer of a devnet.json (`npm start` writes
 * `data/devnet.json`). The key itself is never printed.
 */
import { readFileSync } from 'node:fs'
import { CliError, EXIT } from './CliError.js'

export type DevnetFile = {
  gateway?: { url?: string }
  storage?: { gatewayUrl?: string; arweaveUrl?: string }
  arweave?: { url?: string }
  accounts?: { evm?: { role: string; privateKey: `0x${string}` }[] }
}

export function readDevnet(path: string): DevnetFile {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevnetFile
  } catch (error) {
    throw new CliError('devnet_file_unreadable', `cannot read devnet file ${path}: ${(error as Error).message}`, EXIT.usage)
  }
}

export function evmKey(options: { keyEnv: string; devnet?: string | boolean }, env: NodeJS.ProcessEnv = process.env): `0x${string}` {
  if (options.devnet) {
    const file = typeof options.devnet === 'string' ? options.devnet : 'data/devnet.json'
    const payer = readDevnet(file).accounts?.evm?.find((a) => a.role === 'payer')
    if (!payer) throw new CliError('no_key', `${file} lists no EVM payer account`, EXIT.notPayable)
    return payer.privateKey
  }
  const raw = env[options.keyEnv]?.trim()
  if (!raw) throw new CliError('no_key', `no private key: set ${options.keyEnv} (0x + 64 hex digits) or pass --devnet`, EXIT.notPayable)
  const key = raw.startsWith('0x') ? raw : `0x${raw}`
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new CliError('bad_key', `${options.keyEnv} is not a private key (0x + 64 hex digits)`, EXIT.usage)
  return key as `0x${string}`
}
