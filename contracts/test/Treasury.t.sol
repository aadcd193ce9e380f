// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestBase} from "./utils/Vm.sol";
import {Treasury} from "../src/Treasury.sol";
import {ISwapRouter} from "../src/interfaces/ISwapRouter.sol";
import {ITwapOracle} from "../src/interfaces/ITwapOracle.sol";
import {MockERC20} from "./mocks/MockERC20.sol";
import {MockSwapRouter, ReentrantSwapRouter} from "./mocks/MockSwapRouter.sol";
import {MockTwapOracle} from "./mocks/MockTwapOracle.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

contract TreasuryTest is TestBase {
    event Harvested(uint256 warIn, uint256 usdcOut, uint256 sentToSink);
    event ConfigUpdated(uint256 priceX96, uint16 bps, uint32 twap, address sink);

    uint256 internal constant Q96 = 2 ** 96;

    Treasury internal t;
    MockERC20 internal war;
    MockERC20 internal usdc;
    MockSwapRouter internal router;
    MockTwapOracle internal oracle;
    address internal admin = address(0xAD);
    address internal governor = address(0x60);
    address internal harvester = address(0x4A);
    address internal sink = address(0x5111);
    address internal outsider = address(0xBAD);

    function setUp() public {
        war = new MockERC20("War", "WAR", 18);
        usdc = new MockERC20("USD Coin", "USDC", 6);
        router = new MockSwapRouter();
        oracle = new MockTwapOracle();
        t = new Treasury(admin, IERC20(address(war)), IERC20(address(usdc)), ISwapRouter(address(router)), ITwapOracle(address(oracle)));
        vm.startPrank(admin);
        t.grantRole(t.GOVERNOR_ROLE(), governor);
        t.grantRole(t.HARVESTER_ROLE(), harvester);
        vm.stopPrank();
        war.mint(address(t), 1_000_000);
        router.setRate(2, 1); // 1 war atomic -> 2 usdc atomics
        oracle.setPrice(2 * Q96);
    }

    function _unauthorized(address who, bytes32 role) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, who, role);
    }

    function _config(uint256 price, uint16 bps, uint32 twap, address to) internal {
        vm.prank(governor);
        t.setConfig(price, bps, twap, to);
    }

    function test_defaultsAndWiring() public view {
        assertEq(t.harvestBps(), 1000, "harvestBps");
        assertEq(t.twapWindow(), 1800, "twapWindow");
        assertEq(t.priceX96(), 0, "priceX96");
        assertEq(t.sink(), address(0), "sink");
        assertEq(address(t.war()), address(war), "war");
        assertEq(address(t.usdc()), address(usdc), "usdc");
        assertEq(address(t.router()), address(router), "router");
        assertEq(address(t.oracle()), address(oracle), "oracle");
        assertTrue(t.hasRole(t.DEFAULT_ADMIN_ROLE(), admin), "admin");
        assertTrue(!t.paused(), "not paused");
    }

    // ---- setConfig ----

    function test_setConfig_updatesAndEmits() public {
        vm.expectEmit(true, true, true, true, address(t));
        emit ConfigUpdated(3 * Q96, 2500, 600, sink);
        _config(3 * Q96, 2500, 600, sink);
        assertEq(t.priceX96(), 3 * Q96, "price");
        assertEq(t.harvestBps(), 2500, "bps");
        assertEq(t.twapWindow(), 600, "twap");
        assertEq(t.sink(), sink, "sink");
        _config(0, 10_000, 1, address(0)); // the bound itself is allowed
        assertEq(t.harvestBps(), 10_000, "bps at bound");
    }

    function testFuzz_setConfig_bps(uint16 bps) public {
        if (bps > 10_000) {
            vm.expectRevert(bytes("bps"));
            _config(1, bps, 1, sink);
            assertEq(t.harvestBps(), 1000, "unchanged");
        } else {
            _config(1, bps, 1, sink);
            assertEq(t.harvestBps(), bps, "set");
        }
    }

    function test_setConfig_onlyGovernor() public {
        bytes32 role = t.GOVERNOR_ROLE();
        address[3] memory who = [outsider, harvester, admin];
        for (uint256 i = 0; i < who.length; i++) {
            vm.expectRevert(_unauthorized(who[i], role));
            vm.prank(who[i]);
            t.setConfig(0, 1, 1, sink);
        }
    }

    // ---- harvest ----

    function test_harvest_swapsShareAndForwardsToSink() public {
        _config(2 * Q96, 1000, 1800, sink);
        oracle.setPriceFor(address(war), 1800, 2 * Q96); // exactly at the threshold passes
        oracle.setPrice(0); // any other (token, window) would be below
        vm.expectEmit(true, true, true, true, address(t));
        emit Harvested(100_000, 200_000, 200_000);
        vm.prank(harvester);
        assertEq(t.harvest(200_000), 200_000, "usdcOut");
        assertEq(war.balanceOf(address(t)), 900_000, "war left");
        assertEq(war.balanceOf(address(router)), 100_000, "war sold");
        assertEq(usdc.balanceOf(sink), 200_000, "sink paid");
        assertEq(usdc.balanceOf(address(t)), 0, "nothing kept");
        assertEq(war.allowance(address(t), address(router)), 0, "allowance reset");
    }

    function test_harvest_withoutSinkKeepsProceeds() public {
        vm.expectEmit(true, true, true, true, address(t));
        emit Harvested(100_000, 200_000, 0);
        vm.prank(harvester);
        t.harvest(0);
        assertEq(usdc.balanceOf(address(t)), 200_000, "kept");
    }

    function test_harvest_usesConfiguredBpsAndWindow() public {
        _config(Q96, 2500, 600, sink);
        oracle.setPrice(0);
        oracle.setPriceFor(address(war), 600, Q96);
        vm.prank(harvester);
        t.harvest(0);
        assertEq(war.balanceOf(address(t)), 750_000, "25 % sold");
    }

    function test_harvest_belowThreshold() public {
        _config(2 * Q96, 1000, 1800, sink);
        oracle.setPrice(2 * Q96 - 1);
        vm.expectRevert(bytes("below threshold"));
        vm.prank(harvester);
        t.harvest(0);
        assertEq(war.balanceOf(address(t)), 1_000_000, "nothing sold");
    }

    function test_harvest_nothingToHarvest() public {
        vm.prank(governor);
        t.rescue(IERC20(address(war)), governor, 1_000_000);
        vm.expectRevert(bytes("nothing to harvest"));
        vm.prank(harvester);
        t.harvest(0);
        // a balance too small for the share rounds down to zero, too
        war.mint(address(t), 9); // 9 * 1000 / 10000 = 0
        vm.expectRevert(bytes("nothing to harvest"));
        vm.prank(harvester);
        t.harvest(0);
        _config(0, 0, 1800, sink); // 0 bps
        war.mint(address(t), 1_000_000);
        vm.expectRevert(bytes("nothing to harvest"));
        vm.prank(harvester);
        t.harvest(0);
    }

    function test_harvest_minOutEnforcedByRouterAndTreasury() public {
        vm.expectRevert(bytes("router: minOut"));
        vm.prank(harvester);
        t.harvest(200_001);
        router.setShortfall(1); // router claims 200_000 but delivers 199_999
        vm.expectRevert(bytes("slippage"));
        vm.prank(harvester);
        t.harvest(200_000);
    }

    function test_harvest_onlyHarvester() public {
        bytes32 role = t.HARVESTER_ROLE();
        address[3] memory who = [outsider, governor, admin];
        for (uint256 i = 0; i < who.length; i++) {
            vm.expectRevert(_unauthorized(who[i], role));
            vm.prank(who[i]);
            t.harvest(0);
        }
    }

    function test_harvest_nonReentrant() public {
        ReentrantSwapRouter evil = new ReentrantSwapRouter();
        Treasury t2 = new Treasury(admin, IERC20(address(war)), IERC20(address(usdc)), ISwapRouter(address(evil)), ITwapOracle(address(oracle)));
        vm.startPrank(admin);
        t2.grantRole(t2.HARVESTER_ROLE(), harvester);
        t2.grantRole(t2.HARVESTER_ROLE(), address(evil)); // so the re-entry passes the role check
        vm.stopPrank();
        war.mint(address(t2), 1000);
        vm.expectRevert(abi.encodeWithSelector(ReentrancyGuard.ReentrancyGuardReentrantCall.selector));
        vm.prank(harvester);
        t2.harvest(0);
    }

    // ---- pause / unpause ----

    function test_pause_blocksHarvestUntilUnpaused() public {
        vm.prank(governor);
        t.pause();
        assertTrue(t.paused(), "paused");
        vm.expectRevert(abi.encodeWithSelector(Pausable.EnforcedPause.selector));
        vm.prank(harvester);
        t.harvest(0);
        vm.expectRevert(abi.encodeWithSelector(Pausable.EnforcedPause.selector));
        vm.prank(governor);
        t.pause();
        vm.prank(governor);
        t.unpause();
        vm.expectRevert(abi.encodeWithSelector(Pausable.ExpectedPause.selector));
        vm.prank(governor);
        t.unpause();
        vm.prank(harvester);
        t.harvest(0);
    }

    function test_pauseUnpause_onlyGovernor() public {
        bytes32 role = t.GOVERNOR_ROLE();
        vm.expectRevert(_unauthorized(harvester, role));
        vm.prank(harvester);
        t.pause();
        vm.prank(governor);
        t.pause();
        vm.expectRevert(_unauthorized(outsider, role));
        vm.prank(outsider);
        t.unpause();
    }

    // ---- rescue ----

    function test_rescue_movesAnyToken() public {
        MockERC20 stray = new MockERC20("Stray", "STR", 18);
        stray.mint(address(t), 42);
        vm.prank(governor);
        t.rescue(IERC20(address(stray)), outsider, 40);
        assertEq(stray.balanceOf(outsider), 40, "rescued");
        assertEq(stray.balanceOf(address(t)), 2, "rest");
        vm.prank(governor);
        t.rescue(IERC20(address(war)), sink, 1_000_000);
        assertEq(war.balanceOf(sink), 1_000_000, "war rescued");
    }

    function test_rescue_onlyGovernor() public {
        bytes32 role = t.GOVERNOR_ROLE();
        vm.expectRevert(_unauthorized(harvester, role));
        vm.prank(harvester);
        t.rescue(IERC20(address(war)), harvester, 1);
    }

    function test_roles_onlyAdminGrants() public {
        bytes32 role = t.HARVESTER_ROLE();
        vm.expectRevert(_unauthorized(governor, t.DEFAULT_ADMIN_ROLE()));
        vm.prank(governor);
        t.grantRole(role, outsider);
    }

    /// Any balance and bps: exactly floor(balance * bps / 10000) is sold, and the event reports it.
    function testFuzz_harvest_amounts(uint128 balance, uint16 bpsSeed) public {
        uint16 bps = uint16(bound(bpsSeed, 0, 10_000));
        _config(0, bps, 1800, sink);
        war.mint(address(t), uint256(balance));
        uint256 total = war.balanceOf(address(t));
        uint256 expected = total * bps / 10_000;
        if (expected == 0) {
            vm.expectRevert(bytes("nothing to harvest"));
            vm.prank(harvester);
            t.harvest(0);
            return;
        }
        vm.expectEmit(true, true, true, true, address(t));
        emit Harvested(expected, expected * 2, expected * 2);
        vm.prank(harvester);
        t.harvest(expected * 2);
        assertEq(war.balanceOf(address(t)), total - expected, "left");
    }
}
