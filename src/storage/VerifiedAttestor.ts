import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createPublicClient, getAddress, http, isAddress } from 'viem'
import { storageAttestor } from '../batch/storageAttestor.js'
import type { StorageAttestConfig } from './config.js'

/** Attests one verified upload on chain; returns the attestation transaction. */
export type VerifiedAttestor = {
  attest(arTxId: string, sha256Hex: string): Promise<{ txHash: string }>
}

/**
 * The StorageAttest attestor of `SERVICE_STORAGE__ATTEST_*` (seed 4.8): the chain id is asked of the RPC and
 * the contract, unless configured, read from `<data dir>/contracts-<chainId>.json` — both on first use and
 * again after a failure, so a gateway started before the devnet's deployment finished picks it up later.
 */
export function configuredAttestor(config: StorageAttestConfig): VerifiedAttestor {
  let client: Promise<ReturnType<typeof storageAttestor>> | undefined
  const connect = async () => {
    const chainId = await createPublicClient({ transport: http(config.rpcUrl, { retryCount: 1 }) }).getChainId()
    const contract = config.contract ?? (await deployedStorageAttest(config.deploymentsDir, chainId))
    return storageAttestor({ rpcUrl: config.rpcUrl, chainId, contract: getAddress(contract), storerKey: config.attestorKey })
  }
  return {
    async attest(arTxId, sha256Hex) {
      client ??= connect()
      try {
        return await (await client).attest(arTxId, sha256Hex)
      } catch (error) {
        client = undefined
        throw error
      }
    },
  }
}

async function deployedStorageAttest(dir: string, chainId: number): Promise<`0x${string}`> {
  const file = join(dir, `contracts-${chainId}.json`)
  let parsed: { storageAttest?: unknown }
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'))
  } catch {
    throw new Error(`no StorageAttest address: set SERVICE_STORAGE__ATTEST_CONTRACT or deploy with contracts/deploy.ts (expected ${file})`)
  }
  if (typeof parsed.storageAttest !== 'string' || !isAddress(parsed.storageAttest, { strict: false })) throw new Error(`${file} has no storageAttest address`)
  return parsed.storageAttest
}
