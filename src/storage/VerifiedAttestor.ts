import { getAddress } from 'viem'
import { deployedAddress, rpcChainId } from '../batch/chain.js'
import { storageAttestor } from '../batch/storageAttestor.js'
import type { StorageAttestConfig } from './config.js'

/** Where a verified upload was attested on chain: the transaction, its chain and the StorageAttest contract. */
export type AttestationRecord = { txHash: string; chainId: number; contract: string }

/** Attests one verified upload on chain. */
export type VerifiedAttestor = {
  attest(arTxId: string, sha256Hex: string): Promise<AttestationRecord>
}

/**
 * The StorageAttest attestor of `SERVICE_STORAGE__ATTEST_*` (seed 4.8): the chain id is asked of the RPC and
 * the contract, unless configured, read from `<data dir>/contracts-<chainId>.json` — both on first use and
 * again after a failure, so a gateway started before the devnet's deployment finished picks it up later.
 */
export function configuredAttestor(config: StorageAttestConfig): VerifiedAttestor {
  let client: Promise<ReturnType<typeof storageAttestor>> | undefined
  const connect = async () => {
    const chainId = await rpcChainId(config.rpcUrl)
    const contract = config.contract ? getAddress(config.contract) : await deployedAddress(config.deploymentsDir, chainId, 'storageAttest', 'SERVICE_STORAGE__ATTEST_CONTRACT')
    return storageAttestor({ rpcUrl: config.rpcUrl, chainId, contract, storerKey: config.attestorKey })
  }
  return {
    async attest(arTxId, sha256Hex) {
      client ??= connect()
      try {
        const { txHash, chainId, contract } = await (await client).attest(arTxId, sha256Hex)
        return { txHash, chainId, contract }
      } catch (error) {
        client = undefined
        throw error
      }
    },
  }
}
