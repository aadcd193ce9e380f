/**
 * x402 `batch-settlement` on a devnet chain: the escrow a payer deposits into once and the receiver claims
 * vouchers from in batches, its EIP-3009 deposit collector, and Multicall3 (the facilitator reads channel state
 * through it; Anvil has none). @x402/evm ships their addresses and ABIs but no bytecode, so the devnet compiles
 * its own stand-ins (contracts/src/devnet/BatchSettlementEscrow.sol, Erc3009DepositCollector.sol,
 * Multicall3.sol) and places them where the package expects them, as Permit2 is placed (placePermit2.ts): stock
 * x402 clients then deposit, and the reference facilitator claims, settles and refunds, against the devnet.
 */
import { encodeDeployData, type Hex } from 'viem'
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm'
import { loadArtifact } from '../../contracts/compile.js'
import { placeContract } from './startChain.js'

/** Multicall3's address on every public chain. */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const

export const batchEscrowArtifact = () => loadArtifact('devnet/BatchSettlementEscrow.sol', 'BatchSettlementEscrow')
export const erc3009CollectorArtifact = () => loadArtifact('devnet/Erc3009DepositCollector.sol', 'Erc3009DepositCollector')
export const multicall3Artifact = () => loadArtifact('devnet/Multicall3.sol', 'Multicall3')

/** Places Multicall3, the escrow and its collector (bound to the escrow's address) on the chain at `url`. */
export async function placeBatchSettlement(url: string, deployer: `0x${string}`): Promise<void> {
  await placeContract(url, deployer, multicall3Artifact().bytecode, MULTICALL3_ADDRESS)
  await placeContract(url, deployer, batchEscrowArtifact().bytecode, BATCH_SETTLEMENT_ADDRESS)
  const collector = erc3009CollectorArtifact()
  const creation = encodeDeployData({ abi: collector.abi, bytecode: collector.bytecode, args: [BATCH_SETTLEMENT_ADDRESS] }) as Hex
  await placeContract(url, deployer, creation, ERC3009_DEPOSIT_COLLECTOR_ADDRESS)
}
