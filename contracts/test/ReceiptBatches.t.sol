// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestBase} from "./utils/Vm.sol";
import {ReceiptBatches} from "../src/ReceiptBatches.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";

contract ReceiptBatchesTest is TestBase {
    event RootCommitted(uint64 indexed epoch, bytes32 root, uint64 leafCount, bytes32 arweaveTx);
    event Stored(
        address indexed payer, bytes32 indexed arTxid, uint256 sizeBytes, uint256 paidAtomics, uint16 currency, uint64 epoch
    );

    struct Receipt {
        address payer;
        bytes32 arTxid;
        uint256 sizeBytes;
        uint256 paidAtomics;
        uint16 currency;
    }

    ReceiptBatches internal batches;
    address internal admin = address(0xAD);
    address internal attestor = address(0xA7);

    function setUp() public {
        batches = new ReceiptBatches(admin);
        bytes32 role = batches.ATTESTOR_ROLE();
        vm.prank(admin);
        batches.grantRole(role, attestor);
    }

    // ---- tree helpers (sorted-pair hashing, the layout of OpenZeppelin's StandardMerkleTree is not
    //      needed for proof validity: any tree of sorted pairs verifies with MerkleProof) ----

    function _leaf(Receipt memory r) internal pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(r.payer, r.arTxid, r.sizeBytes, r.paidAtomics, r.currency))));
    }

    function _hashPair(bytes32 a, bytes32 b) internal pure returns (bytes32) {
        return a < b ? keccak256(abi.encode(a, b)) : keccak256(abi.encode(b, a));
    }

    function _rootAndProof(bytes32[] memory leaves, uint256 index)
        internal
        pure
        returns (bytes32 root, bytes32[] memory proof)
    {
        bytes32[] memory level = leaves;
        bytes32[] memory buf = new bytes32[](64);
        uint256 depth;
        while (level.length > 1) {
            uint256 sibling = index ^ 1;
            if (sibling < level.length) buf[depth++] = level[sibling];
            bytes32[] memory next = new bytes32[]((level.length + 1) / 2);
            for (uint256 i = 0; i < level.length; i += 2) {
                next[i / 2] = i + 1 < level.length ? _hashPair(level[i], level[i + 1]) : level[i];
            }
            level = next;
            index /= 2;
        }
        root = level[0];
        proof = new bytes32[](depth);
        for (uint256 i = 0; i < depth; i++) proof[i] = buf[i];
    }

    function _receipts(uint256 seed, uint256 n) internal pure returns (Receipt[] memory rs, bytes32[] memory leaves) {
        rs = new Receipt[](n);
        leaves = new bytes32[](n);
        for (uint256 i = 0; i < n; i++) {
            bytes32 h = keccak256(abi.encode(seed, i));
            rs[i] = Receipt(
                address(uint160(uint256(h))),
                keccak256(abi.encode(h, 1)),
                uint256(keccak256(abi.encode(h, 2))) >> (uint8(h[0]) % 256),
                uint256(keccak256(abi.encode(h, 3))) >> (uint8(h[1]) % 256),
                uint16(uint256(h) >> 160)
            );
            leaves[i] = _leaf(rs[i]);
        }
    }

    function _commit(bytes32 root, uint64 count) internal returns (uint64) {
        vm.prank(attestor);
        return batches.commitBatch(root, count, keccak256("tree-file"));
    }

    function _claim(uint64 epoch, Receipt memory r, bytes32[] memory proof) internal {
        batches.attestLeaf(epoch, r.payer, r.arTxid, r.sizeBytes, r.paidAtomics, r.currency, proof);
    }

    // ---- commitBatch ----

    function test_commitBatch_epochsFromOneAndEvent() public {
        assertEq(batches.currentEpoch(), 0, "no epoch yet");
        vm.expectEmit(true, true, true, true, address(batches));
        emit RootCommitted(1, bytes32(uint256(0x100)), 3, bytes32(uint256(0xa1)));
        vm.prank(attestor);
        assertEq(batches.commitBatch(bytes32(uint256(0x100)), 3, bytes32(uint256(0xa1))), 1, "first epoch");
        vm.expectEmit(true, true, true, true, address(batches));
        emit RootCommitted(2, bytes32(uint256(0xb00)), 7, bytes32(uint256(0xa2)));
        vm.prank(attestor);
        assertEq(batches.commitBatch(bytes32(uint256(0xb00)), 7, bytes32(uint256(0xa2))), 2, "second epoch");
        assertEq(batches.currentEpoch(), 2, "current");
        vm.warp(12345);
        _commit(bytes32(uint256(5)), 1);
        (bytes32 root, uint64 count, bytes32 tx_, uint64 at) = batches.batches(2);
        assertEq(root, bytes32(uint256(0xb00)), "stored root");
        assertEq(count, 7, "stored count");
        assertEq(tx_, bytes32(uint256(0xa2)), "stored arweaveTx");
        (,,, at) = batches.batches(3);
        assertEq(at, 12345, "committedAt");
    }

    function test_commitBatch_onlyAttestor() public {
        bytes32 role = batches.ATTESTOR_ROLE();
        address[2] memory outsiders = [address(0xBAD), admin];
        for (uint256 i = 0; i < outsiders.length; i++) {
            vm.expectRevert(
                abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, outsiders[i], role)
            );
            vm.prank(outsiders[i]);
            batches.commitBatch(bytes32(uint256(1)), 1, bytes32(0));
        }
        vm.prank(admin);
        batches.revokeRole(role, attestor);
        vm.expectRevert(abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, attestor, role));
        vm.prank(attestor);
        batches.commitBatch(bytes32(uint256(1)), 1, bytes32(0));
    }

    function test_roles_onlyAdminGrants() public {
        bytes32 role = batches.ATTESTOR_ROLE();
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector, attestor, batches.DEFAULT_ADMIN_ROLE()
            )
        );
        vm.prank(attestor);
        batches.grantRole(role, address(0xBAD));
        assertTrue(batches.hasRole(batches.DEFAULT_ADMIN_ROLE(), admin), "admin has admin role");
    }

    // ---- attestLeaf ----

    /// Vectors made by the npm package openzeppelin merkle-tree 1.0.8 (StandardMerkleTree.of, encoding
    /// ['address','bytes32','uint256','uint256','uint16']): root, leaf hashes and proofs.
    function test_libraryVectors() public {
        Receipt[3] memory r = [
            Receipt(address(0x1111111111111111111111111111111111111111), bytes32(0xabababababababababababababababababababababababababababababababab), 1024, 5000, 1),
            Receipt(address(0x2222222222222222222222222222222222222222), bytes32(0xcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd), 1048576, 1250000, 2),
            Receipt(address(0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF), bytes32(0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff), type(uint256).max, 0, 65535)
        ];
        bytes32 root = 0x6d7aaeb5d8b41cae7d9784b412b980bb85bdfa030e21a7bf6af522949f4395ea;
        assertEq(batches.leafHash(r[0].payer, r[0].arTxid, r[0].sizeBytes, r[0].paidAtomics, r[0].currency), 0x1de11926845f06423478a56cd8ebe74a30907d03717debd61eb24b046d816695, "leaf 0");
        assertEq(batches.leafHash(r[1].payer, r[1].arTxid, r[1].sizeBytes, r[1].paidAtomics, r[1].currency), 0x1d1b81e7e438fbb86c7d7fb17f08fccde0a6a90f86800150d85d12163e1d8e61, "leaf 1");
        assertEq(batches.leafHash(r[2].payer, r[2].arTxid, r[2].sizeBytes, r[2].paidAtomics, r[2].currency), 0x4736d89f221c55395a5cee75f81289a7af019005638f6078637cd2a7cbb105f3, "leaf 2");
        uint64 epoch = _commit(root, 3);
        bytes32[] memory p0 = new bytes32[](2);
        p0[0] = 0x1d1b81e7e438fbb86c7d7fb17f08fccde0a6a90f86800150d85d12163e1d8e61;
        p0[1] = 0x4736d89f221c55395a5cee75f81289a7af019005638f6078637cd2a7cbb105f3;
        bytes32[] memory p1 = new bytes32[](2);
        p1[0] = 0x1de11926845f06423478a56cd8ebe74a30907d03717debd61eb24b046d816695;
        p1[1] = p0[1];
        bytes32[] memory p2 = new bytes32[](1);
        p2[0] = 0x267d5b5419e417ec80bf818bef72aaf568f8a9111fc72285269188abeeae311e;
        _claim(epoch, r[0], p0);
        _claim(epoch, r[1], p1);
        vm.expectEmit(true, true, true, true, address(batches));
        emit Stored(r[2].payer, r[2].arTxid, r[2].sizeBytes, r[2].paidAtomics, r[2].currency, epoch);
        _claim(epoch, r[2], p2);
    }

    function test_attestLeaf_noSuchEpoch() public {
        (Receipt[] memory rs, bytes32[] memory leaves) = _receipts(1, 2);
        (bytes32 root, bytes32[] memory proof) = _rootAndProof(leaves, 0);
        vm.expectRevert(bytes("no such epoch"));
        _claim(1, rs[0], proof); // nothing committed yet
        _commit(root, 2);
        vm.expectRevert(bytes("no such epoch"));
        _claim(0, rs[0], proof); // epochs start at 1
        vm.expectRevert(bytes("no such epoch"));
        _claim(2, rs[0], proof); // beyond the latest
        _claim(1, rs[0], proof);
    }

    function test_attestLeaf_claimedOnceThenClaimed() public {
        (Receipt[] memory rs, bytes32[] memory leaves) = _receipts(2, 5);
        (bytes32 root,) = _rootAndProof(leaves, 0);
        uint64 epoch = _commit(root, 5);
        for (uint256 i = 0; i < rs.length; i++) {
            (, bytes32[] memory proof) = _rootAndProof(leaves, i);
            assertTrue(!batches.claimed(epoch, leaves[i]), "unclaimed before");
            vm.expectEmit(true, true, true, true, address(batches));
            emit Stored(rs[i].payer, rs[i].arTxid, rs[i].sizeBytes, rs[i].paidAtomics, rs[i].currency, epoch);
            vm.prank(address(uint160(0x1000 + i))); // anyone may submit the proof
            _claim(epoch, rs[i], proof);
            assertTrue(batches.claimed(epoch, leaves[i]), "claimed after");
            vm.expectRevert(bytes("claimed"));
            _claim(epoch, rs[i], proof);
        }
    }

    function test_attestLeaf_sameRootInTwoEpochsClaimsSeparately() public {
        (Receipt[] memory rs, bytes32[] memory leaves) = _receipts(3, 3);
        (bytes32 root, bytes32[] memory proof) = _rootAndProof(leaves, 1);
        _commit(root, 3);
        _commit(root, 3);
        _claim(1, rs[1], proof);
        _claim(2, rs[1], proof);
        vm.expectRevert(bytes("claimed"));
        _claim(2, rs[1], proof);
    }

    function test_attestLeaf_badProof() public {
        (Receipt[] memory rs, bytes32[] memory leaves) = _receipts(4, 4);
        (bytes32 root, bytes32[] memory proof) = _rootAndProof(leaves, 2);
        uint64 epoch = _commit(root, 4);
        Receipt memory r = rs[2];
        r.paidAtomics += 1; // a payer claiming more than paid
        vm.expectRevert(bytes("bad proof"));
        _claim(epoch, r, proof);
        vm.expectRevert(bytes("bad proof"));
        _claim(epoch, rs[2], new bytes32[](0)); // missing proof
        (, bytes32[] memory otherProof) = _rootAndProof(leaves, 0);
        vm.expectRevert(bytes("bad proof"));
        _claim(epoch, rs[2], otherProof); // another leaf's proof
    }

    /// Random trees of 1..40 receipts: each leaf's proof is accepted once; changing any field, or any
    /// proof element, gives `bad proof`; the second claim gives `claimed`.
    function testFuzz_merkleProofs(uint256 seed, uint8 size, uint8 pick, uint8 field, uint8 flip) public {
        uint256 n = bound(size, 1, 40);
        uint256 idx = bound(pick, 0, n - 1);
        (Receipt[] memory rs, bytes32[] memory leaves) = _receipts(seed, n);
        (bytes32 root, bytes32[] memory proof) = _rootAndProof(leaves, idx);
        uint64 epoch = _commit(root, uint64(n));

        Receipt memory bad = Receipt(rs[idx].payer, rs[idx].arTxid, rs[idx].sizeBytes, rs[idx].paidAtomics, rs[idx].currency);
        uint256 f = field % 5;
        if (f == 0) bad.payer = address(uint160(bad.payer) ^ 1);
        else if (f == 1) bad.arTxid = bad.arTxid ^ bytes32(uint256(1) << (flip % 256));
        else if (f == 2) bad.sizeBytes ^= uint256(1) << (flip % 256);
        else if (f == 3) bad.paidAtomics ^= uint256(1) << (flip % 256);
        else bad.currency ^= uint16(1 << (flip % 16));
        vm.expectRevert(bytes("bad proof"));
        _claim(epoch, bad, proof);

        if (proof.length > 0) {
            bytes32[] memory tampered = new bytes32[](proof.length);
            for (uint256 i = 0; i < proof.length; i++) tampered[i] = proof[i];
            tampered[flip % proof.length] ^= bytes32(uint256(1) << (seed % 256));
            vm.expectRevert(bytes("bad proof"));
            _claim(epoch, rs[idx], tampered);
        }

        vm.expectEmit(true, true, true, true, address(batches));
        emit Stored(rs[idx].payer, rs[idx].arTxid, rs[idx].sizeBytes, rs[idx].paidAtomics, rs[idx].currency, epoch);
        _claim(epoch, rs[idx], proof);
        vm.expectRevert(bytes("claimed"));
        _claim(epoch, rs[idx], proof);
    }
}
