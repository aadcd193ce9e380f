// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @notice Pulls a deposit from the payer into the escrow; the escrow checks its own balance afterwards.
interface IBatchDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

/// @title BatchSettlementEscrow — devnet stand-in for x402's `x402BatchSettlement`.
/// @notice Written for the devnet from the interface the x402 EVM package's `batch-settlement` client, server and
///         facilitator call (their ABI, EIP-712 domain `x402 Batch Settlement`/`1` and typed structs) and the
///         scheme's specification (specs/schemes/batch-settlement/scheme_batch_settlement_evm.md). A payer
///         deposits once into a channel; the receiver side later claims cumulative vouchers the payer signed
///         (many channels in one transaction), sweeps what it claimed to the receiver (`settle`), and gives the
///         unclaimed rest back (`refund`). A payer who is not served can leave after the channel's withdraw
///         delay (`initiateWithdraw` → `finalizeWithdraw`). Placed where the x402 EVM package expects it
///         (0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003) by devnet/chains/placeBatchSettlement.ts.
///
///         Money rules, each with a forge test: a claim never exceeds what the payer signed
///         (`maxClaimableAmount`) nor what the channel holds; claims are cumulative, so an older or equal voucher
///         claims nothing again; only the receiver side (directly or by its authorizer's signature over the
///         whole batch) claims or refunds; a refund returns at most the unclaimed escrow and advances a nonce
///         so a signed refund runs once.
contract BatchSettlementEscrow is EIP712, Multicall, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice A channel's immutable terms; its EIP-712 hash (bound to this chain and contract) is the channel id.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice One row of a claim batch: the payer's voucher and the cumulative total the receiver side claims.
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct Channel {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct Withdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    mapping(bytes32 => Channel) public channels;
    mapping(bytes32 => Withdrawal) public pendingWithdrawals;
    mapping(bytes32 => uint256) public refundNonce;
    mapping(address => mapping(address => ReceiverTotals)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error InvalidChannel();
    error WithdrawDelayOutOfRange();
    error ZeroDeposit();
    error InvalidCollector();
    error DepositOverflow();
    error DepositCollectionFailed();
    error EmptyBatch();
    error NotAuthorizedToClaim();
    error NotReceiverAuthorizer();
    error InvalidSignature();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error NotAuthorizedToRefund();
    error InvalidRefundNonce();
    error ZeroRefund();
    error NotPayer();
    error NothingToWithdraw();
    error WithdrawalAlreadyPending();
    error WithdrawAmountExceedsAvailable();
    error WithdrawalNotPending();
    error WithdrawDelayNotElapsed();

    constructor() EIP712("x402 Batch Settlement", "1") {}

    // ---- deposits ----

    /// @notice Adds `amount` to the channel of `config`, pulled from the payer by `collector`.
    /// @dev The escrow's own token balance must grow by exactly `amount`: a collector that pulls less (or a
    ///      fee-on-transfer token) cannot credit more than arrived.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        Channel storage ch = channels[channelId];
        if (amount > type(uint128).max - ch.balance) revert DepositOverflow();
        bool opening = ch.balance == 0 && ch.totalClaimed == 0;

        IERC20 token = IERC20(config.token);
        uint256 before = token.balanceOf(address(this));
        IBatchDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (token.balanceOf(address(this)) != before + amount) revert DepositCollectionFailed();

        ch.balance += amount;
        if (opening) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, ch.balance);
    }

    // ---- claims and settlement ----

    /// @notice Claims a batch of vouchers; the sender must be each row's receiver or receiver authorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            ChannelConfig calldata c = voucherClaims[i].voucher.channel;
            if (msg.sender != c.receiver && msg.sender != c.receiverAuthorizer) revert NotAuthorizedToClaim();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Claims a batch any relayer submits, authorised by one signature of the rows' common receiver
    ///         authorizer over the whole batch (`getClaimBatchDigest`).
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        if (!SignatureChecker.isValidSignatureNow(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature))
        {
            revert InvalidSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
            _applyClaim(voucherClaims[i]);
        }
    }

    /// @notice Sends everything claimed for (`receiver`, `token`) and not yet sent. Anyone may call it.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverTotals storage totals = receivers[receiver][token];
        uint128 due = totals.totalClaimed - totals.totalSettled;
        if (due == 0) return;
        totals.totalSettled = totals.totalClaimed;
        IERC20(token).safeTransfer(receiver, due);
        emit Settled(receiver, token, msg.sender, due);
    }

    // ---- refunds ----

    /// @notice Returns up to `amount` of the unclaimed escrow to the payer; by the receiver side itself.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        _refund(config, getChannelId(config), amount);
    }

    /// @notice The same, submitted by anyone with the receiver authorizer's signature for the current nonce.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (
            !SignatureChecker.isValidSignatureNow(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )
        ) revert InvalidSignature();
        _refund(config, channelId, amount);
    }

    // ---- the payer's way out ----

    /// @notice Starts a timed withdrawal of at most the unclaimed escrow; by the payer or its authorizer.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotPayer();
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        Withdrawal storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt != 0) revert WithdrawalAlreadyPending();
        Channel storage ch = channels[channelId];
        if (amount > ch.balance - ch.totalClaimed) revert WithdrawAmountExceedsAvailable();
        w.amount = amount;
        w.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /// @notice Completes a withdrawal once the delay passed, capped at what is still unclaimed then.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotPayer();
        bytes32 channelId = getChannelId(config);
        Withdrawal storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < uint256(w.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        Channel storage ch = channels[channelId];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        uint128 paid = w.amount < unclaimed ? w.amount : unclaimed;
        delete pendingWithdrawals[channelId];
        ch.balance -= paid;
        emit WithdrawFinalized(channelId, msg.sender, paid);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
        if (paid > 0) IERC20(config.token).safeTransfer(config.payer, paid);
    }

    // ---- views ----

    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice EIP-712 hash of `ClaimBatch{claims: ClaimEntry[]}`: the array member is the hash of its entries' hashes.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(voucherClaims[i].voucher.channel),
                    voucherClaims[i].voucher.maxClaimableAmount,
                    voucherClaims[i].totalClaimed
                )
            );
        }
        return _hashTypedDataV4(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ---- internals ----

    /// @dev Cumulative: a row at or below what is already claimed changes nothing (an old voucher replayed, or
    ///      the same batch submitted twice); above it, the row may claim up to the signed ceiling and the balance.
    function _applyClaim(VoucherClaim calldata row) private {
        ChannelConfig calldata c = row.voucher.channel;
        bytes32 channelId = getChannelId(c);
        Channel storage ch = channels[channelId];
        if (row.totalClaimed <= ch.totalClaimed) return;
        if (row.totalClaimed > row.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (row.totalClaimed > ch.balance) revert ClaimExceedsBalance();
        bytes32 digest = getVoucherDigest(channelId, row.voucher.maxClaimableAmount);
        bool signed = c.payerAuthorizer != address(0)
            ? ECDSA.recover(digest, row.signature) == c.payerAuthorizer
            : SignatureChecker.isValidSignatureNow(c.payer, digest, row.signature);
        if (!signed) revert InvalidSignature();
        uint128 delta = row.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = row.totalClaimed;
        receivers[c.receiver][c.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, row.totalClaimed);
    }

    /// @dev The nonce advances first, even when nothing is left to refund, so a signed refund is good once.
    ///      A pending withdrawal shrinks by what the refund returned (it is cancelled once covered).
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        refundNonce[channelId] += 1;
        Channel storage ch = channels[channelId];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        uint128 returned = amount < unclaimed ? amount : unclaimed;
        if (returned == 0) return;
        ch.balance -= returned;
        Withdrawal storage w = pendingWithdrawals[channelId];
        if (w.initiatedAt != 0) {
            if (returned >= w.amount) delete pendingWithdrawals[channelId];
            else w.amount -= returned;
        }
        emit Refunded(channelId, msg.sender, returned);
        if (ch.balance == 0 && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
        IERC20(config.token).safeTransfer(config.payer, returned);
    }
}
