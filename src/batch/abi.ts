import { parseAbi } from 'viem'

/**
 * The part of ReceiptBatches' ABI the gateway uses (contracts/src/ReceiptBatches.sol).
 * `contracts/contracts.anvil.test.ts` checks every item of both ABIs here against the compiled contracts.
 */
export const receiptBatchesAbi = parseAbi([
  'function commitBatch(bytes32 root, uint64 leafCount, bytes32 arweaveTx) returns (uint64 epoch)',
  'function attestLeaf(uint64 epoch, address payer, bytes32 arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency, bytes32[] proof)',
  'function currentEpoch() view returns (uint64)',
  'function claimed(uint64 epoch, bytes32 leaf) view returns (bool)',
  'function leafHash(address payer, bytes32 arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency) pure returns (bytes32)',
  'event RootCommitted(uint64 indexed epoch, bytes32 root, uint64 leafCount, bytes32 arweaveTx)',
  'event Stored(address indexed payer, bytes32 indexed arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency, uint64 epoch)',
])

/** StorageAttest's ABI as used by the gateway (contracts/src/StorageAttest.sol). */
export const storageAttestAbi = parseAbi([
  'function attest(bytes32 txid, bytes32 sha256Expected, bytes signature) returns (uint256 nonce)',
  'function nonces(address storer) view returns (uint256)',
  'event StorageVerified(address indexed storer, bytes32 indexed txid, bytes32 sha256Expected, uint256 nonce)',
])
