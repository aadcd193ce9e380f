// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestBase} from "./utils/Vm.sol";
import {BatchSettlementEscrow} from "../src/devnet/BatchSettlementEscrow.sol";
import {Erc3009DepositCollector} from "../src/devnet/Erc3009DepositCollector.sol";
import {UsdcToken} from "../src/devnet/UsdcToken.sol";

contract BatchSettlementEscrowTest is TestBase {
    BatchSettlementEscrow internal escrow;
    Erc3009DepositCollector internal collector;
    UsdcToken internal usdc;

    uint256 internal constant PAYER_PK = 0xB0B;
    uint256 internal constant AUTHORIZER_PK = 0xA117;
    uint256 internal constant STRANGER_PK = 0xBAD;
    address internal payer;
    address internal authorizer;
    address internal constant RECEIVER = address(0xCAFE);
    address internal constant RELAYER = address(0xF00D);

    function setUp() public {
        escrow = new BatchSettlementEscrow();
        collector = new Erc3009DepositCollector(address(escrow));
        usdc = new UsdcToken();
        payer = vm.addr(PAYER_PK);
        authorizer = vm.addr(AUTHORIZER_PK);
        usdc.mint(payer, 1_000_000_000);
    }

    // ---- helpers: every digest rebuilt here from the EIP-712 definitions, apart from the contract ----

    function _config() internal view returns (BatchSettlementEscrow.ChannelConfig memory) {
        return BatchSettlementEscrow.ChannelConfig({
            payer: payer,
            payerAuthorizer: payer,
            receiver: RECEIVER,
            receiverAuthorizer: authorizer,
            token: address(usdc),
            withdrawDelay: 900,
            salt: bytes32(0)
        });
    }

    function _domain() internal view returns (bytes32) {
        return keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("x402 Batch Settlement"),
                keccak256("1"),
                block.chainid,
                address(escrow)
            )
        );
    }

    function _typed(bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", _domain(), structHash));
    }

    function _channelId(BatchSettlementEscrow.ChannelConfig memory c) internal view returns (bytes32) {
        return _typed(
            keccak256(
                abi.encode(
                    keccak256(
                        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
                    ),
                    c.payer,
                    c.payerAuthorizer,
                    c.receiver,
                    c.receiverAuthorizer,
                    c.token,
                    c.withdrawDelay,
                    c.salt
                )
            )
        );
    }

    function _sign(uint256 pk, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(pk, digest);
        return abi.encodePacked(r, s, v);
    }

    function _voucherSig(uint256 pk, bytes32 channelId, uint128 max) internal view returns (bytes memory) {
        return _sign(pk, _typed(keccak256(abi.encode(keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)"), channelId, max))));
    }

    function _depositData(bytes32 channelId, uint256 amount, uint256 salt, uint256 pk) internal view returns (bytes memory) {
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        bytes32 structHash = keccak256(
            abi.encode(usdc.RECEIVE_WITH_AUTHORIZATION_TYPEHASH(), vm.addr(pk), address(collector), amount, 0, block.timestamp + 3600, nonce)
        );
        bytes memory sig = _sign(pk, keccak256(abi.encodePacked("\x19\x01", usdc.DOMAIN_SEPARATOR(), structHash)));
        return abi.encode(uint256(0), block.timestamp + 3600, salt, sig);
    }

    function _deposit(uint128 amount, uint256 salt) internal returns (bytes32 channelId) {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        channelId = _channelId(c);
        vm.prank(RELAYER);
        escrow.deposit(c, amount, address(collector), _depositData(channelId, amount, salt, PAYER_PK));
    }

    function _row(uint128 max, uint128 total, uint256 signerPk) internal view returns (BatchSettlementEscrow.VoucherClaim memory) {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        return BatchSettlementEscrow.VoucherClaim({
            voucher: BatchSettlementEscrow.Voucher({channel: c, maxClaimableAmount: max}),
            signature: _voucherSig(signerPk, _channelId(c), max),
            totalClaimed: total
        });
    }

    function _one(BatchSettlementEscrow.VoucherClaim memory row) internal pure returns (BatchSettlementEscrow.VoucherClaim[] memory rows) {
        rows = new BatchSettlementEscrow.VoucherClaim[](1);
        rows[0] = row;
    }

    function _batchSig(BatchSettlementEscrow.VoucherClaim[] memory rows, uint256 pk) internal view returns (bytes memory) {
        bytes32[] memory entries = new bytes32[](rows.length);
        for (uint256 i = 0; i < rows.length; ++i) {
            entries[i] = keccak256(
                abi.encode(
                    keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"),
                    _channelId(rows[i].voucher.channel),
                    rows[i].voucher.maxClaimableAmount,
                    rows[i].totalClaimed
                )
            );
        }
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256("ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"),
                keccak256(abi.encodePacked(entries))
            )
        );
        return _sign(pk, _typed(structHash));
    }

    function _refundSig(bytes32 channelId, uint256 nonce, uint128 amount, uint256 pk) internal view returns (bytes memory) {
        return _sign(pk, _typed(keccak256(abi.encode(keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)"), channelId, nonce, amount))));
    }

    function _balance(bytes32 channelId) internal view returns (uint128 balance, uint128 totalClaimed) {
        (balance, totalClaimed) = escrow.channels(channelId);
    }

    // ---- identity ----

    function test_channelIdAndDigestsMatchTheTypedData() public view {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        assertEq(escrow.getChannelId(c), _channelId(c), "channel id");
        bytes32 id = _channelId(c);
        assertEq(
            escrow.getVoucherDigest(id, 5),
            _typed(keccak256(abi.encode(keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)"), id, uint128(5)))),
            "voucher digest"
        );
        (, string memory name, string memory version, uint256 chainId, address verifying,,) = escrow.eip712Domain();
        assertEq(keccak256(bytes(name)), keccak256("x402 Batch Settlement"), "name");
        assertEq(keccak256(bytes(version)), keccak256("1"), "version");
        assertEq(chainId, block.chainid, "chain");
        assertEq(verifying, address(escrow), "verifying contract");
    }

    function test_aChannelIdBindsTheChain() public {
        bytes32 here = escrow.getChannelId(_config());
        vm.chainId(1);
        assertTrue(escrow.getChannelId(_config()) != here, "same id on another chain");
    }

    // ---- deposits ----

    function test_depositCreditsTheChannelFromThePayersAuthorization() public {
        bytes32 id = _deposit(10_000, 1);
        (uint128 balance, uint128 claimed) = _balance(id);
        assertEq(balance, 10_000, "balance");
        assertEq(claimed, 0, "claimed");
        assertEq(usdc.balanceOf(address(escrow)), 10_000, "escrow holds it");
        assertEq(usdc.balanceOf(payer), 1_000_000_000 - 10_000, "payer paid it");
    }

    function test_aDepositSignedForAnotherChannelIsRefused() public {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        BatchSettlementEscrow.ChannelConfig memory other = _config();
        other.salt = bytes32(uint256(7));
        bytes memory data = _depositData(_channelId(other), 10_000, 1, PAYER_PK);
        vm.expectRevert(bytes("FiatTokenV2: invalid signature"));
        escrow.deposit(c, 10_000, address(collector), data);
    }

    function test_aDepositAuthorizationRunsOnce() public {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        bytes memory data = _depositData(_channelId(c), 10_000, 1, PAYER_PK);
        escrow.deposit(c, 10_000, address(collector), data);
        vm.expectRevert(bytes("FiatTokenV2: authorization is used or canceled"));
        escrow.deposit(c, 10_000, address(collector), data);
    }

    function test_onlyTheEscrowCallsTheCollector() public {
        bytes memory data = _depositData(_channelId(_config()), 10_000, 1, PAYER_PK);
        vm.expectRevert(abi.encodeWithSelector(Erc3009DepositCollector.OnlyEscrow.selector));
        collector.collect(payer, address(usdc), 10_000, _channelId(_config()), data);
    }

    function test_aDepositCreditsOnlyWhatArrived() public {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        // a "collector" that moves nothing cannot credit the channel
        address idle = address(new IdleCollector());
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.DepositCollectionFailed.selector));
        escrow.deposit(c, 10_000, idle, "");
    }

    function test_aWithdrawDelayOutsideTheBoundsIsRefused() public {
        BatchSettlementEscrow.ChannelConfig memory c = _config();
        c.withdrawDelay = 899;
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.WithdrawDelayOutOfRange.selector));
        escrow.deposit(c, 1, address(collector), "");
    }

    // ---- claims ----

    function test_claimsAreCumulativeAndAReplayedVoucherClaimsNothing() public {
        bytes32 id = _deposit(10_000, 1);
        vm.startPrank(RECEIVER);
        escrow.claim(_one(_row(300, 300, PAYER_PK)));
        escrow.claim(_one(_row(700, 700, PAYER_PK)));
        escrow.claim(_one(_row(300, 300, PAYER_PK))); // replayed older voucher: a no-op
        escrow.claim(_one(_row(700, 700, PAYER_PK))); // replayed latest voucher: a no-op
        vm.stopPrank();
        (, uint128 claimed) = _balance(id);
        assertEq(claimed, 700, "claimed once, cumulatively");
        (uint128 receiverClaimed,) = escrow.receivers(RECEIVER, address(usdc));
        assertEq(receiverClaimed, 700, "receiver total");
    }

    function test_aClaimAboveTheSignedCeilingIsRefused() public {
        _deposit(10_000, 1);
        vm.prank(RECEIVER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.ClaimExceedsCeiling.selector));
        escrow.claim(_one(_row(500, 501, PAYER_PK)));
    }

    function test_aVoucherPastTheDepositCannotBeClaimed() public {
        _deposit(1_000, 1);
        vm.prank(RECEIVER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.ClaimExceedsBalance.selector));
        escrow.claim(_one(_row(1_001, 1_001, PAYER_PK)));
    }

    function test_aVoucherNotSignedByThePayerIsRefused() public {
        _deposit(1_000, 1);
        vm.prank(RECEIVER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidSignature.selector));
        escrow.claim(_one(_row(500, 500, STRANGER_PK)));
    }

    function test_onlyTheReceiverSideClaims() public {
        _deposit(1_000, 1);
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.NotAuthorizedToClaim.selector));
        escrow.claim(_one(_row(500, 500, PAYER_PK)));
    }

    function test_aRelayedBatchNeedsTheAuthorizersSignatureAndRunsOnce() public {
        bytes32 id = _deposit(10_000, 1);
        BatchSettlementEscrow.VoucherClaim[] memory rows = _one(_row(900, 900, PAYER_PK));
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidSignature.selector));
        escrow.claimWithSignature(rows, _batchSig(rows, STRANGER_PK));
        // a signature over another batch (a higher total) does not authorise this one
        BatchSettlementEscrow.VoucherClaim[] memory more = _one(_row(900, 800, PAYER_PK));
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidSignature.selector));
        escrow.claimWithSignature(rows, _batchSig(more, AUTHORIZER_PK));

        bytes memory sig = _batchSig(rows, AUTHORIZER_PK);
        vm.prank(RELAYER);
        escrow.claimWithSignature(rows, sig);
        // the same batch submitted again (two replicas claiming the same voucher): nothing more
        vm.prank(RELAYER);
        escrow.claimWithSignature(rows, sig);
        (, uint128 claimed) = _balance(id);
        assertEq(claimed, 900, "claimed once");
        (uint128 receiverClaimed,) = escrow.receivers(RECEIVER, address(usdc));
        assertEq(receiverClaimed, 900, "receiver credited once");
    }

    function test_settleSendsWhatWasClaimedOnce() public {
        _deposit(10_000, 1);
        vm.prank(RECEIVER);
        escrow.claim(_one(_row(1_234, 1_234, PAYER_PK)));
        vm.prank(RELAYER);
        escrow.settle(RECEIVER, address(usdc));
        vm.prank(RELAYER);
        escrow.settle(RECEIVER, address(usdc));
        assertEq(usdc.balanceOf(RECEIVER), 1_234, "receiver got the claim, once");
        assertEq(usdc.balanceOf(address(escrow)), 10_000 - 1_234, "the rest stays in escrow");
    }

    // ---- refunds ----

    function test_aRefundReturnsAtMostTheUnclaimedEscrow() public {
        bytes32 id = _deposit(10_000, 1);
        vm.startPrank(RECEIVER);
        escrow.claim(_one(_row(4_000, 4_000, PAYER_PK)));
        escrow.refund(_config(), 1_000_000);
        vm.stopPrank();
        (uint128 balance, uint128 claimed) = _balance(id);
        assertEq(balance, 4_000, "balance = claimed");
        assertEq(claimed, 4_000, "claimed kept");
        assertEq(usdc.balanceOf(payer), 1_000_000_000 - 4_000, "payer got the unclaimed 6000 back");
        assertEq(escrow.refundNonce(id), 1, "nonce advanced");
    }

    function test_aSignedRefundRunsOnceAndOnlyByTheAuthorizersSignature() public {
        bytes32 id = _deposit(10_000, 1);
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidSignature.selector));
        escrow.refundWithSignature(_config(), 3_000, 0, _refundSig(id, 0, 3_000, STRANGER_PK));
        // a signature for another amount does not refund this one
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidSignature.selector));
        escrow.refundWithSignature(_config(), 9_000, 0, _refundSig(id, 0, 3_000, AUTHORIZER_PK));

        bytes memory sig = _refundSig(id, 0, 3_000, AUTHORIZER_PK);
        vm.prank(RELAYER);
        escrow.refundWithSignature(_config(), 3_000, 0, sig);
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.InvalidRefundNonce.selector));
        escrow.refundWithSignature(_config(), 3_000, 0, sig);
        (uint128 balance,) = _balance(id);
        assertEq(balance, 7_000, "refunded once");
    }

    function test_onlyTheReceiverSideRefundsDirectly() public {
        _deposit(10_000, 1);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.NotAuthorizedToRefund.selector));
        escrow.refund(_config(), 1);
    }

    // ---- the payer's way out ----

    function test_aTimedWithdrawalWaitsForTheDelayAndLeavesTheClaimsToTheReceiver() public {
        bytes32 id = _deposit(10_000, 1);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.WithdrawAmountExceedsAvailable.selector));
        escrow.initiateWithdraw(_config(), 10_001);
        vm.prank(payer);
        escrow.initiateWithdraw(_config(), 10_000);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.WithdrawDelayNotElapsed.selector));
        escrow.finalizeWithdraw(_config());
        // the receiver claims during the window: that part is no longer the payer's
        vm.prank(RECEIVER);
        escrow.claim(_one(_row(2_500, 2_500, PAYER_PK)));
        vm.warp(block.timestamp + 900);
        vm.prank(payer);
        escrow.finalizeWithdraw(_config());
        (uint128 balance, uint128 claimed) = _balance(id);
        assertEq(balance, 2_500, "what was claimed stays");
        assertEq(claimed, 2_500, "claimed");
        assertEq(usdc.balanceOf(payer), 1_000_000_000 - 2_500, "payer withdrew the rest");
    }

    function test_onlyThePayerWithdraws() public {
        _deposit(10_000, 1);
        vm.prank(RECEIVER);
        vm.expectRevert(abi.encodeWithSelector(BatchSettlementEscrow.NotPayer.selector));
        escrow.initiateWithdraw(_config(), 1);
    }

    // ---- the whole ledger ----

    /// Any sequence of served charges: the receiver gets exactly their sum, the payer the rest, the escrow nothing.
    function testFuzz_theReceiverGetsExactlyWhatWasClaimedAndThePayerTheRest(uint256 seed) public {
        uint128 deposit = 50_000;
        _deposit(deposit, 1);
        uint128 charged = 0;
        vm.startPrank(RECEIVER);
        for (uint256 i = 0; i < 8; ++i) {
            uint128 charge = uint128(bound(uint256(keccak256(abi.encode(seed, i))), 0, 5_000));
            charged += charge;
            if (charge > 0) escrow.claim(_one(_row(charged, charged, PAYER_PK)));
        }
        escrow.settle(RECEIVER, address(usdc));
        escrow.refund(_config(), type(uint128).max);
        vm.stopPrank();
        assertEq(usdc.balanceOf(RECEIVER), charged, "receiver = sum of charges");
        assertEq(usdc.balanceOf(payer), 1_000_000_000 - charged, "payer = everything else");
        assertEq(usdc.balanceOf(address(escrow)), 0, "escrow empty");
    }
}

/// A collector that moves nothing.
contract IdleCollector {
    function collect(address, address, uint256, bytes32, bytes calldata) external {}
}
