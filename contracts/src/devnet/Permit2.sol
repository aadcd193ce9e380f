// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/// @title Permit2 — devnet stand-in for Uniswap's Permit2, SignatureTransfer half.
/// @notice Written for the devnet (no upstream code): what x402's `upto` scheme calls on Permit2 — the
///         witness transfer (`permitWitnessTransferFrom`), the unordered nonce bitmap and its invalidation,
///         and the EIP-712 domain `Permit2` (no version) bound to the chain and this address. Placed at
///         Permit2's canonical address (0x000000000022D473030F116dDEE9F6B43aC78BA3) by the devnet, so signatures
///         made for the real Permit2 verify here and nowhere else. The domain separator is computed from
///         `address(this)` on every call because the code is placed, not deployed, at that address.
///         The AllowanceTransfer half (approve/permit/transferFrom with allowances) is not here: x402 does not use it.
contract Permit2 {
    using SafeERC20 for IERC20;

    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 public constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    string public constant PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// owner → word position → bitmap of used nonces (nonce = wordPos << 8 | bitPos), as Permit2 keeps them.
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSigner();

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useUnorderedNonce(owner, permit.nonce);

        bytes32 typeHash = keccak256(abi.encodePacked(PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 permittedHash = keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, permit.permitted.amount));
        // msg.sender is the spender: a permit signed for one spender cannot be pulled by another.
        bytes32 dataHash = keccak256(abi.encode(typeHash, permittedHash, msg.sender, permit.nonce, permit.deadline, witness));
        bytes32 digest = MessageHashUtils.toTypedDataHash(DOMAIN_SEPARATOR(), dataHash);
        if (!SignatureChecker.isValidSignatureNow(owner, digest, signature)) revert InvalidSigner();

        IERC20(permit.permitted.token).safeTransferFrom(owner, transferDetails.to, transferDetails.requestedAmount);
    }

    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function _useUnorderedNonce(address from, uint256 nonce) internal {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[from][wordPos] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }
}
