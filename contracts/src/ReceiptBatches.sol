// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title ReceiptBatches
/// @notice Daily Merkle roots over paid-storage receipts (seed 000 §4.8). The gateway's attestor commits one
///         root per batch with the permanent-storage id of the tree file; anyone holding a receipt and its
///         proof (served by `GET /store/receipts/{ar_tx_id}`) can then claim it once with `attestLeaf`.
/// @dev Leaf = keccak256(bytes.concat(keccak256(abi.encode(payer, arTxid, sizeBytes, paidAtomics, currency)))),
///      the leaf of the OpenZeppelin merkle-tree library (StandardMerkleTree) with encoding
///      `['address','bytes32','uint256','uint256','uint16']`; pairs are hashed sorted (MerkleProof).
///      Currency codes: 1 USDC on eip155:8453, 2 USDC on eip155:1, 3 USDC ASA on Algorand, 4 native ALGO.
contract ReceiptBatches is AccessControl {
    /// @notice May commit batches.
    bytes32 public constant ATTESTOR_ROLE = keccak256("ATTESTOR_ROLE");

    struct Batch {
        bytes32 root;
        uint64 leafCount;
        bytes32 arweaveTx;
        uint64 committedAt;
    }

    /// @notice Latest epoch; epochs count from 1, so 0 means none committed yet.
    uint64 public currentEpoch;

    /// @notice Committed batches by epoch.
    mapping(uint64 epoch => Batch) public batches;

    /// @notice Whether a leaf of an epoch has been claimed.
    mapping(uint64 epoch => mapping(bytes32 leaf => bool)) public claimed;

    /// @notice A batch was committed.
    event RootCommitted(uint64 indexed epoch, bytes32 root, uint64 leafCount, bytes32 arweaveTx);

    /// @notice A receipt of `epoch` was proven and claimed.
    event Stored(
        address indexed payer, bytes32 indexed arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency, uint64 epoch
    );

    /// @param admin Holder of `DEFAULT_ADMIN_ROLE` (grants and revokes `ATTESTOR_ROLE`).
    constructor(address admin) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice Commits a batch root (attestor only).
    /// @param root Merkle root of the batch's receipt tree.
    /// @param leafCount Number of receipts in the tree.
    /// @param arweaveTx 32 bytes of the storage id of the tree file (`tree.dump()` JSON).
    /// @return epoch The new epoch (1 for the first batch).
    function commitBatch(bytes32 root, uint64 leafCount, bytes32 arweaveTx)
        external
        onlyRole(ATTESTOR_ROLE)
        returns (uint64 epoch)
    {
        epoch = ++currentEpoch;
        batches[epoch] = Batch(root, leafCount, arweaveTx, uint64(block.timestamp));
        emit RootCommitted(epoch, root, leafCount, arweaveTx);
    }

    /// @notice Proves a receipt against the root of `epoch` and marks it claimed.
    /// @dev Reverts `no such epoch` for epoch 0 or beyond the latest, `claimed` when the leaf was already
    ///      claimed in that epoch, `bad proof` when the proof does not lead to the root.
    function attestLeaf(
        uint64 epoch,
        address payer,
        bytes32 arTxid,
        uint256 sizeBytes,
        uint256 paidAtomics,
        uint16 currency,
        bytes32[] calldata proof
    ) external {
        require(epoch != 0 && epoch <= currentEpoch, "no such epoch");
        bytes32 leaf = leafHash(payer, arTxid, sizeBytes, paidAtomics, currency);
        require(!claimed[epoch][leaf], "claimed");
        require(MerkleProof.verifyCalldata(proof, batches[epoch].root, leaf), "bad proof");
        claimed[epoch][leaf] = true;
        emit Stored(payer, arTxid, sizeBytes, paidAtomics, currency, epoch);
    }

    /// @notice The leaf of a receipt (double keccak of the ABI encoding, as StandardMerkleTree).
    function leafHash(address payer, bytes32 arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency)
        public
        pure
        returns (bytes32)
    {
        return keccak256(bytes.concat(keccak256(abi.encode(payer, arTxid, sizeBytes, paidAtomics, currency))));
    }
}
