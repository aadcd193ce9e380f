// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ITwapOracle
/// @notice Time-weighted average price source the Treasury checks before harvesting.
/// @dev `consult(token, window)` returns the price of one atomic unit of `token` in atomic units of the
///      quote token (the Treasury's `usdc`), averaged over the last `window` seconds, as a Q64.96 fixed-point
///      number (`price * 2**96`). It must revert when it has no observation covering `window`, rather than
///      return a spot price. An adapter over a Uniswap v3 pool's `observe()` fits this shape.
interface ITwapOracle {
    /// @param token Token priced (the Treasury's harvested token).
    /// @param window Averaging window in seconds.
    /// @return priceX96 Time-weighted price, quote atomics per token atomic, times 2**96.
    function consult(address token, uint32 window) external view returns (uint256 priceX96);
}
