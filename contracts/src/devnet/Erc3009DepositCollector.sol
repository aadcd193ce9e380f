// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IBatchDepositCollector} from "./BatchSettlementEscrow.sol";

/// @notice The EIP-3009 half of a token the collector pulls with (USDC's bytes-signature overload).
interface IReceiveWithAuthorization {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @title Erc3009DepositCollector — devnet stand-in for x402's `ERC3009DepositCollector`.
/// @notice Pulls a batch-settlement deposit with the payer's EIP-3009 `ReceiveWithAuthorization` (signed to this
///         collector, as the x402 EVM package's client signs it) and hands it to the escrow. The authorization's nonce is
///         `keccak256(abi.encode(channelId, salt))`, so a deposit signed for one channel cannot fund another.
///         Only the escrow calls it: a deposit is always credited to the channel it was signed for.
///         Placed at 0x4020806089470a89826cB9fB1f4059150b550004 by devnet/chains/placeBatchSettlement.ts.
contract Erc3009DepositCollector is IBatchDepositCollector {
    using SafeERC20 for IERC20;

    address public immutable ESCROW;

    error OnlyEscrow();

    constructor(address escrow) {
        ESCROW = escrow;
    }

    /// @param data `abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)`.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != ESCROW) revert OnlyEscrow();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IReceiveWithAuthorization(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        IERC20(token).safeTransfer(ESCROW, amount);
    }
}
