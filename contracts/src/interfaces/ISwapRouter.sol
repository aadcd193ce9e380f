// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ISwapRouter
/// @notice The swap venue the Treasury harvests through: an exact-input, single-hop swap.
/// @dev The caller approves `amountIn` of `tokenIn` to the router first; the router pulls it with
///      `transferFrom(msg.sender, …)`, sends at least `minOut` of `tokenOut` to `to` and returns the amount
///      sent. It must revert (any reason) when it cannot deliver `minOut`. Adapters wrap a concrete DEX
///      (e.g. a Uniswap v3 `exactInputSingle` with a fixed fee tier) behind this interface.
interface ISwapRouter {
    /// @param tokenIn Token sold.
    /// @param tokenOut Token bought.
    /// @param amountIn Exact amount of `tokenIn` pulled from the caller.
    /// @param minOut Minimum amount of `tokenOut` to deliver, else revert.
    /// @param to Recipient of `tokenOut`.
    /// @return amountOut Amount of `tokenOut` delivered to `to`.
    function swapExactIn(address tokenIn, address tokenOut, uint256 amountIn, uint256 minOut, address to)
        external
        returns (uint256 amountOut);
}
