import { createPublicClient, createWalletClient, encodeFunctionData, http, keccak256, serializeErc6492Signature, toHex, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadArtifact } from '../../../contracts/compile.js'
import type { TestWallet } from './wallet.js'

const SOURCE = 'devnet/TestSmartWallet.sol'

/** The factory's artifact (solc-js, cached under contracts/out). */
export const smartWalletFactoryArtifact = () => loadArtifact(SOURCE, 'TestSmartWalletFactory')

export type SmartWalletFactory = {
  address: Address
  /** A wallet contract deployed now for `ownerKey`: the page sees the contract; signatures are EIP-1271. */
  deployed: (ownerKey: Hex, salt?: string) => Promise<TestWallet>
  /** A counterfactual wallet (CREATE2 address, no code yet): signatures are EIP-6492-wrapped (factory + calldata). */
  counterfactual: (ownerKey: Hex, salt?: string) => Promise<TestWallet>
  /** Whether code exists at `address` (a 6492 login must not deploy anything). */
  hasCode: (address: Address) => Promise<boolean>
}

/**
 * Deploys devnet/TestSmartWallet.sol's factory on a chain (compiled offline with solc-js, contracts/compile.ts)
 * using `deployerKey` (a funded devnet account) and makes smart-contract test wallets owned by EOA keys.
 */
export async function deploySmartWalletFactory(rpcUrl: string, deployerKey: Hex): Promise<SmartWalletFactory> {
  const factoryArtifact = smartWalletFactoryArtifact()
  const abi = factoryArtifact.abi as readonly unknown[]
  const deployer = privateKeyToAccount(deployerKey)
  const publicClient = createPublicClient({ transport: http(rpcUrl) })
  const chainId = await publicClient.getChainId()
  const chain = { id: chainId, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } } as const
  const walletClient = createWalletClient({ account: deployer, chain, transport: http(rpcUrl) })
  const hash = await walletClient.deployContract({ abi, bytecode: factoryArtifact.bytecode })
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 })
  const factory = receipt.contractAddress as Address
  const saltOf = (s: string) => keccak256(toHex(s))
  const addressOf = (owner: Address, salt: Hex) => publicClient.readContract({ address: factory, abi, functionName: 'addressOf', args: [owner, salt] }) as Promise<Address>
  const ownerSigner = (ownerKey: Hex) => privateKeyToAccount(ownerKey)
  return {
    address: factory,
    hasCode: async (address) => ((await publicClient.getCode({ address })) ?? '0x') !== '0x',
    deployed: async (ownerKey, salt = 'deployed') => {
      const owner = ownerSigner(ownerKey)
      const s = saltOf(salt)
      const tx = await walletClient.writeContract({ address: factory, abi, functionName: 'deploy', args: [owner.address, s] })
      await publicClient.waitForTransactionReceipt({ hash: tx, pollingInterval: 100 })
      const address = await addressOf(owner.address, s)
      return {
        address,
        signMessage: (raw) => owner.signMessage({ message: { raw } }),
        signTypedData: (data) => owner.signTypedData(data),
        info: { name: 'Contract Wallet (EIP-1271)', rdns: 'org.pay2store.contractwallet' },
      }
    },
    counterfactual: async (ownerKey, salt = 'counterfactual') => {
      const owner = ownerSigner(ownerKey)
      const s = saltOf(salt)
      const address = await addressOf(owner.address, s)
      const data = encodeFunctionData({ abi, functionName: 'deploy', args: [owner.address, s] })
      return {
        address,
        signMessage: async (raw) => serializeErc6492Signature({ address: factory, data, signature: await owner.signMessage({ message: { raw } }) }),
        signTypedData: async (typed) => serializeErc6492Signature({ address: factory, data, signature: await owner.signTypedData(typed) }),
        info: { name: 'Undeployed Wallet (EIP-6492)', rdns: 'org.pay2store.counterfactualwallet' },
      }
    },
  }
}
