import { type Address, type Hex, parseEventLogs } from 'viem'
import { storageAttestAbi } from './abi.js'
import { keyedRpcClients } from './chain.js'
import { BatchCommitFailedError } from './errors.js'
import { arTxIdToBytes32 } from './receiptLeaf.js'

export type StorageAttestorOptions = {
  rpcUrl: string
  chainId: number
  /** The StorageAttest contract. */
  contract: Address
  /** The storer's key: it signs the EIP-712 `Attest` and sends the transaction itself (signer = caller). */
  storerKey: Hex
  pollingIntervalMs?: number
}

/** The attestation transaction, the nonce `StorageVerified` reported, and where it was sent. */
export type Attestation = { txHash: Hex; nonce: bigint; chainId: number; contract: Address }

/**
 * Attests a verified upload on chain (seed 000 §4.8 StorageAttest): reads the storer's nonce, signs
 * `Attest(txid, sha256Expected, storer, nonce)` under the domain `StorageAttest`/`1`/chainId/contract,
 * calls `attest` and returns the transaction, the nonce from `StorageVerified`, the chain id and contract. For the paid-storage verifier to call after
 * a successful verification, when configured. Not concurrency-safe per storer: call it from one loop.
 */
export function storageAttestor(opts: StorageAttestorOptions) {
  const { account, pub, wallet } = keyedRpcClients(opts.rpcUrl, opts.chainId, opts.storerKey)
  return {
    storer: account.address,
    async attest(arTxId: string, sha256Hex: string): Promise<Attestation> {
      if (!/^[0-9a-f]{64}$/i.test(sha256Hex)) throw new TypeError('sha256Hex must be 64 hex characters')
      const txid = arTxIdToBytes32(arTxId)
      const sha256Expected = `0x${sha256Hex.toLowerCase()}` as Hex
      const nonce = await pub.readContract({ address: opts.contract, abi: storageAttestAbi, functionName: 'nonces', args: [account.address] })
      const signature = await account.signTypedData({
        domain: { name: 'StorageAttest', version: '1', chainId: opts.chainId, verifyingContract: opts.contract },
        types: {
          Attest: [
            { name: 'txid', type: 'bytes32' },
            { name: 'sha256Expected', type: 'bytes32' },
            { name: 'storer', type: 'address' },
            { name: 'nonce', type: 'uint256' },
          ],
        },
        primaryType: 'Attest',
        message: { txid, sha256Expected, storer: account.address, nonce },
      })
      const { request } = await pub.simulateContract({
        account,
        address: opts.contract,
        abi: storageAttestAbi,
        functionName: 'attest',
        args: [txid, sha256Expected, signature],
      })
      const txHash = await wallet.writeContract(request)
      const receipt = await pub.waitForTransactionReceipt({ hash: txHash, pollingInterval: opts.pollingIntervalMs ?? 500 })
      const [event] = parseEventLogs({ abi: storageAttestAbi, eventName: 'StorageVerified', logs: receipt.logs })
      if (receipt.status !== 'success' || !event) throw new BatchCommitFailedError(`attest transaction ${txHash} failed`)
      return { txHash, nonce: event.args.nonce, chainId: opts.chainId, contract: opts.contract }
    },
  }
}
