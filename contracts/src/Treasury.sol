// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ISwapRouter} from "./interfaces/ISwapRouter.sol";
import {ITwapOracle} from "./interfaces/ITwapOracle.sol";

/// @title Treasury
/// @notice Holds the service's `war` token and periodically sells a share of it (`harvestBps` of the balance)
///         for `usdc` through an `ISwapRouter`, but only while the `ITwapOracle` time-weighted price over
///         `twapWindow` seconds is at or above the `priceX96` threshold; proceeds go to `sink` (seed 000 §4.8).
/// @dev Roles: `DEFAULT_ADMIN_ROLE` (grants roles), `GOVERNOR_ROLE` (config, pause, rescue),
///      `HARVESTER_ROLE` (harvest). A zero `sink` keeps the proceeds in the treasury (`sentToSink` = 0).
contract Treasury is AccessControl, Pausable, ReentrancyGuard {
    using SafeERC20 for IERC20;

    bytes32 public constant HARVESTER_ROLE = keccak256("HARVESTER_ROLE");
    bytes32 public constant GOVERNOR_ROLE = keccak256("GOVERNOR_ROLE");

    /// @notice Token harvested (sold).
    IERC20 public immutable war;
    /// @notice Token received.
    IERC20 public immutable usdc;
    ISwapRouter public immutable router;
    ITwapOracle public immutable oracle;

    /// @notice Minimum time-weighted price (Q64.96, usdc atomics per war atomic) for a harvest; 0 = none.
    uint256 public priceX96;
    /// @notice Share of the war balance sold per harvest, in basis points (default 1000 = 10 %).
    uint16 public harvestBps = 1000;
    /// @notice TWAP window in seconds (default 1800).
    uint32 public twapWindow = 1800;
    /// @notice Receiver of the proceeds; zero keeps them here.
    address public sink;

    event Harvested(uint256 warIn, uint256 usdcOut, uint256 sentToSink);
    event ConfigUpdated(uint256 priceX96, uint16 bps, uint32 twap, address sink);

    constructor(address admin, IERC20 war_, IERC20 usdc_, ISwapRouter router_, ITwapOracle oracle_) {
        war = war_;
        usdc = usdc_;
        router = router_;
        oracle = oracle_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice Sets the threshold price, harvest share, TWAP window and sink (governor). Reverts `bps`
    ///         when `bps` exceeds 10000.
    function setConfig(uint256 priceX96_, uint16 bps, uint32 twap, address sink_) external onlyRole(GOVERNOR_ROLE) {
        require(bps <= 10_000, "bps");
        priceX96 = priceX96_;
        harvestBps = bps;
        twapWindow = twap;
        sink = sink_;
        emit ConfigUpdated(priceX96_, bps, twap, sink_);
    }

    /// @notice Sells `harvestBps` of the war balance for usdc and forwards the proceeds to `sink`.
    /// @dev Reverts `nothing to harvest` when that share is zero, `below threshold` when the TWAP is under
    ///      `priceX96`, `slippage` when fewer than `minOut` usdc actually arrived.
    /// @param minOut Minimum usdc out, passed to the router and checked against the balance change.
    /// @return usdcOut Usdc received by the treasury from the swap.
    function harvest(uint256 minOut)
        external
        onlyRole(HARVESTER_ROLE)
        whenNotPaused
        nonReentrant
        returns (uint256 usdcOut)
    {
        uint256 warIn = war.balanceOf(address(this)) * harvestBps / 10_000;
        require(warIn != 0, "nothing to harvest");
        require(oracle.consult(address(war), twapWindow) >= priceX96, "below threshold");

        uint256 before = usdc.balanceOf(address(this));
        war.forceApprove(address(router), warIn);
        router.swapExactIn(address(war), address(usdc), warIn, minOut, address(this));
        war.forceApprove(address(router), 0);
        usdcOut = usdc.balanceOf(address(this)) - before;
        require(usdcOut >= minOut, "slippage");

        uint256 sent;
        address to = sink;
        if (to != address(0)) {
            sent = usdcOut;
            usdc.safeTransfer(to, sent);
        }
        emit Harvested(warIn, usdcOut, sent);
    }

    /// @notice Stops harvesting (governor).
    function pause() external onlyRole(GOVERNOR_ROLE) {
        _pause();
    }

    /// @notice Resumes harvesting (governor).
    function unpause() external onlyRole(GOVERNOR_ROLE) {
        _unpause();
    }

    /// @notice Moves any token out of the treasury (governor), e.g. tokens sent by mistake.
    function rescue(IERC20 token, address to, uint256 amount) external onlyRole(GOVERNOR_ROLE) {
        token.safeTransfer(to, amount);
    }
}
