import { readFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Address, type Chain, type Hex, createPublicClient, createWalletClient, getAddress, http, isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { BatchConfigError } from './errors.js'

/** A viem chain for an RPC we only know by URL and chain id. */
function rpcChain(chainId: number, rpcUrl: string): Chain {
  return {
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  }
}

/** The account of `key` and the public and wallet clients of one RPC (the batch committer, the storage attestor). */
export function keyedRpcClients(rpcUrl: string, chainId: number, key: Hex) {
  const account = privateKeyToAccount(key)
  const chain = rpcChain(chainId, rpcUrl)
  const transport = http(rpcUrl, { retryCount: 1 })
  return { account, pub: createPublicClient({ chain, transport }), wallet: createWalletClient({ account, chain, transport }) }
}

/** The chain id the RPC reports. */
export function rpcChainId(rpcUrl: string): Promise<number> {
  return createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) }).getChainId()
}

type DeployedContract = 'receiptBatches' | 'storageAttest'
const CONTRACT_NAME: Record<DeployedContract, string> = { receiptBatches: 'ReceiptBatches', storageAttest: 'StorageAttest' }

/** Path of the deployment file `contracts/deploy.ts` writes for `chainId`. */
export const deploymentFile = (dataDir: string, chainId: number): string => join(dataDir, `contracts-${chainId}.json`)

function addressIn(text: string | undefined, file: string, contract: DeployedContract, setting: string): Address {
  let parsed: Partial<Record<DeployedContract, unknown>>
  try {
    if (text === undefined) throw new Error('absent')
    parsed = JSON.parse(text)
  } catch {
    throw new BatchConfigError(`no ${CONTRACT_NAME[contract]} address: set ${setting} or deploy with contracts/deploy.ts (expected ${file})`)
  }
  const value = parsed[contract]
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw new BatchConfigError(`${file} has no ${contract} address`)
  return getAddress(value)
}

/** A contract's address from `<dataDir>/contracts-<chainId>.json`; `setting` names the variable that overrides it. */
export function deployedAddressSync(dataDir: string, chainId: number, contract: DeployedContract, setting: string): Address {
  const file = deploymentFile(dataDir, chainId)
  let text: string | undefined
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    text = undefined
  }
  return addressIn(text, file, contract, setting)
}

export async function deployedAddress(dataDir: string, chainId: number, contract: DeployedContract, setting: string): Promise<Address> {
  const file = deploymentFile(dataDir, chainId)
  const text = await readFile(file, 'utf8').catch(() => undefined)
  return addressIn(text, file, contract, setting)
}
