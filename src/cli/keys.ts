/**
 * Where the CLI's keys come from: an environment variable (`--key-env`, default `PAY2STORE_PRIVATE_KEY`,
 * for EVM; `--algorand-key-env`, default `PAY2STORE_ALGORAND_MNEMONIC`, a 25-word Algorand mnemonic), or
 * with `--devnet [file]` the first funded payer of a devnet.json (`npm start` writes `data/devnet.json`),
 * which also names the devnet's Algorand node. The key itself is never printed.
 */
import { readFileSync } from 'node:fs'
import algosdk from 'algosdk'
import { CliError, EXIT } from './CliError.js'

export type DevnetFile = {
  gateway?: { url?: string }
  storage?: { gatewayUrl?: string; arweaveUrl?: string }
  arweave?: { url?: string }
  algorand?: { url?: string; token?: string }
  accounts?: { evm?: { role: string; privateKey: `0x${string}` }[]; algorand?: { role: string; mnemonic: string }[] }
}

const devnetPath = (devnet: string | boolean) => (typeof devnet === 'string' ? devnet : 'data/devnet.json')

export function readDevnet(path: string): DevnetFile {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevnetFile
  } catch (error) {
    throw new CliError('devnet_file_unreadable', `cannot read devnet file ${path}: ${(error as Error).message}`, EXIT.usage)
  }
}

export function evmKey(options: { keyEnv: string; devnet?: string | boolean }, env: NodeJS.ProcessEnv = process.env): `0x${string}` {
  if (options.devnet) {
    const file = devnetPath(options.devnet)
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

export type AlgorandKeyOptions = { algorandKeyEnv: string; devnet?: string | boolean; algod?: string; algodTokenEnv: string }

/**
 * The Algorand payer and its node: `--algorand-key-env` (a mnemonic) with `--algod` and the token in
 * `--algod-token-env`, or the devnet file's first Algorand payer and node (explicit `--algod` wins).
 */
export function algorandKey(options: AlgorandKeyOptions, env: NodeJS.ProcessEnv = process.env): { account: algosdk.Account; algodUrl: string; algodToken: string } {
  let mnemonic: string | undefined
  let algodUrl = options.algod
  let algodToken = env[options.algodTokenEnv]?.trim() ?? ''
  if (options.devnet) {
    const file = devnetPath(options.devnet)
    const devnet = readDevnet(file)
    mnemonic = devnet.accounts?.algorand?.find((a) => a.role === 'payer')?.mnemonic
    if (!mnemonic) throw new CliError('no_key', `${file} lists no Algorand payer account`, EXIT.notPayable)
    algodUrl ??= devnet.algorand?.url
    algodToken = algodToken || (devnet.algorand?.token ?? '')
  } else {
    mnemonic = env[options.algorandKeyEnv]?.trim()
    if (!mnemonic) throw new CliError('no_key', `no Algorand key: set ${options.algorandKeyEnv} (25-word mnemonic) or pass --devnet`, EXIT.notPayable)
  }
  let account: algosdk.Account
  try {
    account = algosdk.mnemonicToSecretKey(mnemonic.split(/\s+/).join(' '))
  } catch {
    throw new CliError('bad_key', `${options.devnet ? 'the devnet file' : options.algorandKeyEnv} does not hold a valid Algorand mnemonic`, EXIT.usage)
  }
  return { account, algodUrl: algodUrl ?? 'http://127.0.0.1:8405', algodToken }
}
