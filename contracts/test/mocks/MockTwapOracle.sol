// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ITwapOracle} from "../../src/interfaces/ITwapOracle.sol";

/// @notice Oracle returning a settable price; records the last window asked for.
contract MockTwapOracle is ITwapOracle {
    uint256 public price;
    mapping(address token => mapping(uint32 window => uint256)) public priceFor;
    mapping(address token => mapping(uint32 window => bool)) public hasPriceFor;

    function setPrice(uint256 priceX96) external {
        price = priceX96;
    }

    /// @notice A price for one (token, window) pair only, to prove which pair the caller asked for.
    function setPriceFor(address token, uint32 window, uint256 priceX96) external {
        priceFor[token][window] = priceX96;
        hasPriceFor[token][window] = true;
    }

    function consult(address token, uint32 window) external view returns (uint256) {
        if (hasPriceFor[token][window]) return priceFor[token][window];
        return price;
    }
}
