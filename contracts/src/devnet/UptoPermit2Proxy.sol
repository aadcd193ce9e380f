// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {Permit2} from "./Permit2.sol";

/// @title UptoPermit2Proxy — devnet stand-in for x402's `x402UptoPermit2Proxy`.
/// @notice Written for the devnet from the interface the x402 EVM package's `upto` facilitator calls (its ABI:
///         `settle(permit, amount, owner, witness, signature)`, `PERMIT2`, `WITNESS_TYPEHASH`,
///         `WITNESS_TYPE_STRING`, the custom errors). It is Permit2's spender: the payer signs a permit whose
///         witness names the recipient (`to`), the one facilitator allowed to settle it and `validAfter`; the
///         facilitator settles any amount up to the permitted one, once (Permit2's nonce). Placed at the
///         address the x402 EVM package expects (0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002). `settleWithPermit`
///         (EIP-2612 gas sponsoring) is not here: the devnet payers approve Permit2 once instead.
contract UptoPermit2Proxy is ReentrancyGuard {
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    Permit2 public immutable PERMIT2;

    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");
    /// EIP-712's encodeType tail after `deadline,`: the witness member, then the referenced types sorted by name.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    event Settled();

    error AmountExceedsPermitted();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidPermit2Address();
    error PaymentTooEarly();
    error UnauthorizedFacilitator();

    constructor(address permit2) {
        if (permit2 == address(0)) revert InvalidPermit2Address();
        PERMIT2 = Permit2(permit2);
    }

    function settle(
        Permit2.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            Permit2.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}
