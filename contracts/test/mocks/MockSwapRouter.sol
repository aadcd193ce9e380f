// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ISwapRouter} from "../../src/interfaces/ISwapRouter.sol";
import {MockERC20} from "./MockERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @notice Router that pulls `amountIn` and mints `amountIn * rateNum / rateDen` of `tokenOut` (a MockERC20).
///         `shortfall` makes it deliver less than it reports, to test the treasury's own slippage check.
contract MockSwapRouter is ISwapRouter {
    uint256 public rateNum = 1;
    uint256 public rateDen = 1;
    uint256 public shortfall;

    function setRate(uint256 num, uint256 den) external {
        rateNum = num;
        rateDen = den;
    }

    function setShortfall(uint256 amount) external {
        shortfall = amount;
    }

    function swapExactIn(address tokenIn, address tokenOut, uint256 amountIn, uint256 minOut, address to)
        external
        virtual
        returns (uint256 amountOut)
    {
        IERC20(tokenIn).transferFrom(msg.sender, address(this), amountIn);
        amountOut = amountIn * rateNum / rateDen;
        require(amountOut >= minOut, "router: minOut");
        MockERC20(tokenOut).mint(to, amountOut - shortfall);
    }
}

interface IHarvest {
    function harvest(uint256 minOut) external returns (uint256);
}

/// @notice Router that calls back into `harvest` during the swap (reentrancy probe).
contract ReentrantSwapRouter is ISwapRouter {
    function swapExactIn(address, address, uint256, uint256, address) external returns (uint256) {
        return IHarvest(msg.sender).harvest(0);
    }
}
