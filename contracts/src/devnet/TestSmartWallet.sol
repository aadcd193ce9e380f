// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @notice DEVNET / TEST ONLY. A minimal smart-contract wallet: a signature is valid (EIP-1271) when its owner
/// signed the hash. Lets tests sign in with a contract wallet (deployed: EIP-1271; counterfactual: EIP-6492).
contract TestSmartWallet is IERC1271 {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecover(hash, signature);
        return err == ECDSA.RecoverError.NoError && signer == owner ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}

/// @notice DEVNET / TEST ONLY. CREATE2 factory: the wallet's address is known before it exists (EIP-6492).
contract TestSmartWalletFactory {
    event Deployed(address wallet, address owner);

    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = address(new TestSmartWallet{salt: salt}(owner));
        emit Deployed(wallet, owner);
    }

    function addressOf(address owner, bytes32 salt) external view returns (address) {
        bytes32 codeHash = keccak256(abi.encodePacked(type(TestSmartWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, codeHash)))));
    }
}
