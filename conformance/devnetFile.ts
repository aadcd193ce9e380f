/**
 * `--devnet <devnet.json>`: what a run against `npm start` takes from the devnet it started (the file
 * `<SERVICE_DATA_DIR>/devnet.json`, devnet/startDevnet.ts): the overlord's TEST key, the first EVM payer and both
 * chains' RPCs, algod with the first Algorand payer, and the model registry the pull rows pull from. Devnet keys
 * only: this file never exists for a real deployment.
 */
import { readFileSync } from 'node:fs'
import type { AlgorandPayerOptions } from './algorandPayer.js'

export type DevnetSettings = {
  keys: Record<string, `0x${string}`>
  chains: string[]
  algorand?: AlgorandPayerOptions
  vars: Record<string, string>
}

type DevnetJson = {
  chains?: Record<string, { rpcUrl: string }>
  algorand?: { url: string; token: string }
  registry?: { host: string }
  shadow?: { overlord?: { privateKey: `0x${string}` } }
  accounts?: { evm?: { role: string; privateKey: `0x${string}` }[]; algorand?: { role: string; mnemonic: string }[] }
}

export function readDevnetFile(file: string): DevnetSettings {
  let info: DevnetJson
  try {
    info = JSON.parse(readFileSync(file, 'utf8')) as DevnetJson
  } catch (error) {
    throw new Error(`cannot read ${file} as devnet.json (${(error as Error).message.split('\n')[0]})`)
  }
  const keys: DevnetSettings['keys'] = {}
  const overlord = info.shadow?.overlord?.privateKey
  if (overlord) keys.overlord = overlord
  const payer = info.accounts?.evm?.find((a) => a.role === 'payer')?.privateKey
  if (payer) keys.payer = payer
  const algorandPayer = info.accounts?.algorand?.find((a) => a.role === 'payer')?.mnemonic
  return {
    keys,
    chains: payer ? Object.values(info.chains ?? {}).map((c) => c.rpcUrl) : [],
    algorand: info.algorand && algorandPayer ? { algodUrl: info.algorand.url, algodToken: info.algorand.token, mnemonic: algorandPayer } : undefined,
    vars: info.registry ? { registry: info.registry.host } : {},
  }
}
