// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @title StorageAttest
/// @notice A storer attests that a permanent-storage transaction holds content with an expected SHA-256
///         (seed 000 §4.8). The attestation is an EIP-712 signature (domain `StorageAttest` / `1`) over
///         `Attest(bytes32 txid,bytes32 sha256Expected,address storer,uint256 nonce)` made by the caller
///         itself; `nonce` is the caller's attestation counter, so a signature is good exactly once.
contract StorageAttest is EIP712 {
    /// @notice keccak256 of the EIP-712 struct type.
    bytes32 public constant ATTEST_TYPEHASH =
        keccak256("Attest(bytes32 txid,bytes32 sha256Expected,address storer,uint256 nonce)");

    /// @notice Next nonce of each storer (number of attestations made so far).
    mapping(address storer => uint256) public nonces;

    /// @notice A storer attested `txid` with content digest `sha256Expected`, using `nonce`.
    event StorageVerified(address indexed storer, bytes32 indexed txid, bytes32 sha256Expected, uint256 nonce);

    constructor() EIP712("StorageAttest", "1") {}

    /// @notice Records an attestation by `msg.sender`.
    /// @param txid 32 bytes of the storage transaction id (the decoded 43-character base64url id).
    /// @param sha256Expected SHA-256 of the stored content.
    /// @param signature 65-byte ECDSA signature of the typed struct with `storer = msg.sender` and
    ///        `nonce = nonces[msg.sender]`; reverts `Attest: bad sig` unless it recovers to the caller.
    /// @return nonce The nonce consumed by this attestation.
    function attest(bytes32 txid, bytes32 sha256Expected, bytes calldata signature) external returns (uint256 nonce) {
        nonce = nonces[msg.sender];
        bytes32 digest = attestDigest(txid, sha256Expected, msg.sender, nonce);
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
        require(err == ECDSA.RecoverError.NoError && signer == msg.sender, "Attest: bad sig");
        nonces[msg.sender] = nonce + 1;
        emit StorageVerified(msg.sender, txid, sha256Expected, nonce);
    }

    /// @notice The EIP-712 digest a storer signs for the given fields.
    function attestDigest(bytes32 txid, bytes32 sha256Expected, address storer, uint256 nonce)
        public
        view
        returns (bytes32)
    {
        return _hashTypedDataV4(keccak256(abi.encode(ATTEST_TYPEHASH, txid, sha256Expected, storer, nonce)));
    }

    /// @notice The EIP-712 domain separator of this deployment.
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }
}
