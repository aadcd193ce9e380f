// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestBase} from "./utils/Vm.sol";
import {StorageAttest} from "../src/StorageAttest.sol";

contract StorageAttestTest is TestBase {
    event StorageVerified(address indexed storer, bytes32 indexed txid, bytes32 sha256Expected, uint256 nonce);

    StorageAttest internal attest;
    uint256 internal constant PK = 0xA11CE;
    address internal storer;

    function setUp() public {
        attest = new StorageAttest();
        storer = vm.addr(PK);
    }

    /// The digest computed here from the EIP-712 definition, independently of the contract.
    function _digest(bytes32 txid, bytes32 sha, address who, uint256 nonce) internal view returns (bytes32) {
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("StorageAttest"),
                keccak256("1"),
                block.chainid,
                address(attest)
            )
        );
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256("Attest(bytes32 txid,bytes32 sha256Expected,address storer,uint256 nonce)"),
                txid,
                sha,
                who,
                nonce
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domain, structHash));
    }

    function _sign(uint256 pk, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(pk, digest);
        return abi.encodePacked(r, s, v);
    }

    function test_domainAndTypehash() public view {
        assertEq(
            attest.ATTEST_TYPEHASH(),
            keccak256("Attest(bytes32 txid,bytes32 sha256Expected,address storer,uint256 nonce)"),
            "typehash"
        );
        assertEq(attest.attestDigest(bytes32(uint256(1)), bytes32(uint256(2)), storer, 0), _digest(bytes32(uint256(1)), bytes32(uint256(2)), storer, 0), "digest");
        (, string memory name, string memory version, uint256 chainId, address verifying,,) = attest.eip712Domain();
        assertEq(keccak256(bytes(name)), keccak256("StorageAttest"), "name");
        assertEq(keccak256(bytes(version)), keccak256("1"), "version");
        assertEq(chainId, block.chainid, "chainId");
        assertEq(verifying, address(attest), "verifyingContract");
    }

    function test_attest_emitsAndCountsNonce() public {
        bytes32 txid = keccak256("tx");
        bytes32 sha = sha256("content");
        bytes memory sig0 = _sign(PK, _digest(txid, sha, storer, 0));
        vm.expectEmit(true, true, true, true, address(attest));
        emit StorageVerified(storer, txid, sha, 0);
        vm.prank(storer);
        assertEq(attest.attest(txid, sha, sig0), 0, "returned nonce");
        assertEq(attest.nonces(storer), 1, "nonce after first");

        bytes memory sig1 = _sign(PK, _digest(txid, sha, storer, 1));
        vm.expectEmit(true, true, true, true, address(attest));
        emit StorageVerified(storer, txid, sha, 1);
        vm.prank(storer);
        attest.attest(txid, sha, sig1);
        assertEq(attest.nonces(storer), 2, "nonce after second");
    }

    function test_revert_replayedSignature() public {
        bytes32 txid = keccak256("tx");
        bytes memory sig = _sign(PK, _digest(txid, bytes32(0), storer, 0));
        vm.prank(storer);
        attest.attest(txid, bytes32(0), sig);
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(storer);
        attest.attest(txid, bytes32(0), sig);
    }

    function test_revert_callerIsNotSigner() public {
        bytes memory sig = _sign(PK, _digest(bytes32(0), bytes32(0), storer, 0));
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(address(0xBEEF));
        attest.attest(bytes32(0), bytes32(0), sig);
    }

    function test_revert_malformedSignature() public {
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(storer);
        attest.attest(bytes32(0), bytes32(0), hex"1234");
        bytes memory zero = new bytes(65);
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(storer);
        attest.attest(bytes32(0), bytes32(0), zero);
    }

    function test_revert_wrongDomainChain() public {
        bytes memory sig = _sign(PK, _digest(bytes32(0), bytes32(0), storer, 0));
        vm.chainId(block.chainid + 1);
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(storer);
        attest.attest(bytes32(0), bytes32(0), sig);
    }

    /// Any key, any fields: the caller's own signature is accepted once with nonce n, then n+1 is required.
    function testFuzz_attest_ownSignature(uint256 pkSeed, bytes32 txid, bytes32 sha, uint8 rounds) public {
        uint256 pk = bound(pkSeed, 1, SECP256K1_N - 1);
        address who = vm.addr(pk);
        uint256 n = bound(rounds, 1, 4);
        for (uint256 i = 0; i < n; i++) {
            bytes memory sig = _sign(pk, _digest(txid, sha, who, i));
            vm.expectEmit(true, true, true, true, address(attest));
            emit StorageVerified(who, txid, sha, i);
            vm.prank(who);
            attest.attest(txid, sha, sig);
        }
        assertEq(attest.nonces(who), n, "nonce");
    }

    /// A signature by any other key, or over any other field value, is rejected with `Attest: bad sig`.
    function testFuzz_attest_rejectsWrongSignerOrField(
        uint256 pkSeed,
        uint256 otherSeed,
        bytes32 txid,
        bytes32 sha,
        uint8 which
    ) public {
        uint256 pk = bound(pkSeed, 1, SECP256K1_N - 1);
        uint256 other = bound(otherSeed, 1, SECP256K1_N - 1);
        vm.assume(pk != other);
        address who = vm.addr(pk);
        bytes memory sig;
        uint256 w = which % 4;
        if (w == 0) sig = _sign(other, _digest(txid, sha, who, 0)); // other key
        else if (w == 1) sig = _sign(pk, _digest(txid ^ bytes32(uint256(1)), sha, who, 0)); // other txid
        else if (w == 2) sig = _sign(pk, _digest(txid, ~sha, who, 0)); // other digest
        else sig = _sign(pk, _digest(txid, sha, who, 1)); // future nonce
        vm.expectRevert(bytes("Attest: bad sig"));
        vm.prank(who);
        attest.attest(txid, sha, sig);
        assertEq(attest.nonces(who), 0, "nonce unchanged");
    }
}
