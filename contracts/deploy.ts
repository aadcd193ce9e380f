/**
 * Deploys StorageAttest, ReceiptBatches and Treasury to any EVM RPC, grants the configured roles and writes
 * the addresses to `<SERVICE_DATA_DIR>/contracts-<chainId>.json`.
 *
 * Treasury venue: the treasury needs the harvested token (`war`), the quote token (`usdc`), an
 * `ISwapRouter` and an `ITwapOracle` (contracts/src/interfaces). Pass them in `treasury`; without them
 * (the devnet case) a mock venue is deployed from contracts/test/mocks — a mintable WAR and USDC, a
 * fixed-rate router and a settable oracle — and recorded as `venue: "mock"` so nothing mistakes it for a
 * real market.
 *
 * Roles: the deployer holds `DEFAULT_ADMIN_ROLE` while granting; `ATTESTOR_ROLE` (ReceiptBatches),
 * `GOVERNOR_ROLE` and `HARVESTER_ROLE` (Treasury) go to the configured addresses. With `roles.admin` set to
 * another address, admin is granted to it and the deployer renounces its own.
 *
 * CLI: `tsx contracts/deploy.ts [--rpc URL] [--key 0x…] [--data-dir DIR] [--reuse]`, other settings from
 * the environment: SERVICE_CONTRACTS__RPC_URL, SERVICE_CONTRACTS__DEPLOYER_KEY, SERVICE_DATA_DIR,
 * SERVICE_CONTRACTS__ADMIN, SERVICE_CONTRACTS__ATTESTORS, SERVICE_CONTRACTS__GOVERNORS,
 * SERVICE_CONTRACTS__HARVESTERS (comma-separated addresses), SERVICE_CONTRACTS__TREASURY_WAR,
 * SERVICE_CONTRACTS__TREASURY_USDC, SERVICE_CONTRACTS__TREASURY_ROUTER, SERVICE_CONTRACTS__TREASURY_ORACLE.
 * The key is never printed.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Abi,
  type Address,
  type Hex,
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  isAddress,
  keccak256,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { type Artifact, compileContracts } from './compile.js'

export const CONTRACT_SOURCES = ['StorageAttest.sol', 'ReceiptBatches.sol', 'Treasury.sol'] as const
export const MOCK_SOURCES = [
  '../test/mocks/MockERC20.sol',
  '../test/mocks/MockSwapRouter.sol',
  '../test/mocks/MockTwapOracle.sol',
] as const

export const ROLE = {
  DEFAULT_ADMIN: `0x${'00'.repeat(32)}` as Hex,
  ATTESTOR: keccak256(toHex('ATTESTOR_ROLE')),
  GOVERNOR: keccak256(toHex('GOVERNOR_ROLE')),
  HARVESTER: keccak256(toHex('HARVESTER_ROLE')),
} as const

export type DeployRoles = {
  /** Final holder of DEFAULT_ADMIN_ROLE on every contract (default: the deployer). */
  admin?: Address
  attestors?: Address[]
  governors?: Address[]
  harvesters?: Address[]
}

export type TreasuryVenue = { war: Address; usdc: Address; router: Address; oracle: Address }

export type DeployContractsParameters = {
  rpcUrl: string
  deployerKey: Hex
  roles?: DeployRoles
  /** Real venue; omitted → mock venue (devnet only). */
  treasury?: TreasuryVenue
  /** Where `contracts-<chainId>.json` goes (default SERVICE_DATA_DIR or ./data); `false` writes nothing. */
  dataDir?: string | false
}

export type ContractsDeployment = {
  chainId: number
  deployer: Address
  deployedAt: number
  storageAttest: Address
  receiptBatches: Address
  treasury: Address
  treasuryVenue: TreasuryVenue & { venue: 'configured' | 'mock' }
  roles: { admin: Address; attestors: Address[]; governors: Address[]; harvesters: Address[] }
}

export function deploymentPath(dataDir: string, chainId: number): string {
  return join(dataDir, `contracts-${chainId}.json`)
}

export function defaultDataDir(): string {
  return resolve(process.env.SERVICE_DATA_DIR ?? 'data')
}

/** Reads `contracts-<chainId>.json` from the data dir, or undefined when absent. */
export function readDeployment(dataDir: string, chainId: number): ContractsDeployment | undefined {
  const p = deploymentPath(dataDir, chainId)
  if (!existsSync(p)) return undefined
  return JSON.parse(readFileSync(p, 'utf8')) as ContractsDeployment
}

export function loadContractArtifacts(): Record<'StorageAttest' | 'ReceiptBatches' | 'Treasury', Artifact> {
  const a = compileContracts([...CONTRACT_SOURCES])
  const pick = (name: string): Artifact => {
    const found = a[name]
    if (!found) throw new Error(`contract ${name} missing from the compile output`)
    return found
  }
  return { StorageAttest: pick('StorageAttest'), ReceiptBatches: pick('ReceiptBatches'), Treasury: pick('Treasury') }
}

export function loadMockArtifacts(): Record<'MockERC20' | 'MockSwapRouter' | 'MockTwapOracle', Artifact> {
  const a = compileContracts([...MOCK_SOURCES])
  const pick = (name: string): Artifact => {
    const found = a[name]
    if (!found) throw new Error(`contract ${name} missing from the compile output`)
    return found
  }
  return { MockERC20: pick('MockERC20'), MockSwapRouter: pick('MockSwapRouter'), MockTwapOracle: pick('MockTwapOracle') }
}

export async function deployContracts(params: DeployContractsParameters): Promise<ContractsDeployment> {
  const account = privateKeyToAccount(params.deployerKey)
  const transport = http(params.rpcUrl, { retryCount: 0 })
  const pub = createPublicClient({ transport })
  const chainId = await pub.getChainId()
  const chain = {
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [params.rpcUrl] } },
  } as const
  const wallet = createWalletClient({ account, chain, transport })

  const deploy = async (artifact: Artifact, args: unknown[]): Promise<Address> => {
    const hash = await wallet.deployContract({ abi: artifact.abi as Abi, bytecode: artifact.bytecode, args })
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 100 })
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`deployment of ${artifact.contractName} failed (tx ${hash})`)
    }
    return getAddress(receipt.contractAddress)
  }
  const send = async (address: Address, abi: Abi, functionName: string, args: unknown[]): Promise<void> => {
    const hash = await wallet.writeContract({ address, abi, functionName, args })
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 100 })
    if (receipt.status !== 'success') throw new Error(`${functionName} on ${address} reverted (tx ${hash})`)
  }

  const art = loadContractArtifacts()
  let venue: ContractsDeployment['treasuryVenue']
  if (params.treasury) {
    venue = { ...params.treasury, venue: 'configured' }
  } else {
    const mocks = loadMockArtifacts()
    venue = {
      war: await deploy(mocks.MockERC20, ['Mock WAR', 'WAR', 18]),
      usdc: await deploy(mocks.MockERC20, ['Mock USD Coin', 'mUSDC', 6]),
      router: await deploy(mocks.MockSwapRouter, []),
      oracle: await deploy(mocks.MockTwapOracle, []),
      venue: 'mock',
    }
  }

  const storageAttest = await deploy(art.StorageAttest, [])
  const receiptBatches = await deploy(art.ReceiptBatches, [account.address])
  const treasury = await deploy(art.Treasury, [account.address, venue.war, venue.usdc, venue.router, venue.oracle])

  const uniq = (xs: Address[] | undefined): Address[] => [...new Set((xs ?? []).map((x) => getAddress(x)))]
  const roles = {
    admin: getAddress(params.roles?.admin ?? account.address),
    attestors: uniq(params.roles?.attestors),
    governors: uniq(params.roles?.governors),
    harvesters: uniq(params.roles?.harvesters),
  }
  const batchesAbi = art.ReceiptBatches.abi as Abi
  const treasuryAbi = art.Treasury.abi as Abi
  for (const a of roles.attestors) await send(receiptBatches, batchesAbi, 'grantRole', [ROLE.ATTESTOR, a])
  for (const a of roles.governors) await send(treasury, treasuryAbi, 'grantRole', [ROLE.GOVERNOR, a])
  for (const a of roles.harvesters) await send(treasury, treasuryAbi, 'grantRole', [ROLE.HARVESTER, a])
  if (roles.admin !== account.address) {
    for (const [address, abi] of [[receiptBatches, batchesAbi], [treasury, treasuryAbi]] as const) {
      await send(address, abi, 'grantRole', [ROLE.DEFAULT_ADMIN, roles.admin])
      await send(address, abi, 'renounceRole', [ROLE.DEFAULT_ADMIN, account.address])
    }
  }

  const deployment: ContractsDeployment = {
    chainId,
    deployer: account.address,
    deployedAt: Math.floor(Date.now() / 1000),
    storageAttest,
    receiptBatches,
    treasury,
    treasuryVenue: venue,
    roles,
  }
  const dataDir = params.dataDir === undefined ? defaultDataDir() : params.dataDir
  if (dataDir !== false) {
    mkdirSync(dataDir, { recursive: true })
    const p = deploymentPath(dataDir, chainId)
    writeFileSync(`${p}.${process.pid}.tmp`, `${JSON.stringify(deployment, null, 2)}\n`)
    renameSync(`${p}.${process.pid}.tmp`, p)
  }
  return deployment
}

/**
 * Returns the recorded deployment when its three contracts still have code on the chain (an Anvil
 * restarted without state loses them), else deploys afresh.
 */
export async function deployOrReuse(params: DeployContractsParameters): Promise<ContractsDeployment> {
  const dataDir = params.dataDir === undefined ? defaultDataDir() : params.dataDir
  if (dataDir !== false) {
    const pub = createPublicClient({ transport: http(params.rpcUrl, { retryCount: 0 }) })
    const chainId = await pub.getChainId()
    const known = readDeployment(dataDir, chainId)
    if (known) {
      const codes = await Promise.all(
        [known.storageAttest, known.receiptBatches, known.treasury].map((address) => pub.getCode({ address })),
      )
      if (codes.every((c) => c !== undefined && c !== '0x')) return known
    }
  }
  return deployContracts(params)
}

function addressList(value: string | undefined, name: string): Address[] | undefined {
  if (!value) return undefined
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      if (!isAddress(s)) throw new Error(`${name}: not an address: ${s}`)
      return s
    })
}

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

async function main(argv: string[]): Promise<void> {
  const env = process.env
  const rpcUrl = flag(argv, '--rpc') ?? env.SERVICE_CONTRACTS__RPC_URL ?? 'http://127.0.0.1:8545'
  const deployerKey = (flag(argv, '--key') ?? env.SERVICE_CONTRACTS__DEPLOYER_KEY) as Hex | undefined
  if (!deployerKey || !/^0x[0-9a-fA-F]{64}$/.test(deployerKey)) {
    throw new Error('a deployer key is required: --key 0x… or SERVICE_CONTRACTS__DEPLOYER_KEY (32-byte hex)')
  }
  const venueVars = ['WAR', 'USDC', 'ROUTER', 'ORACLE'].map((k) => env[`SERVICE_CONTRACTS__TREASURY_${k}`])
  let treasury: TreasuryVenue | undefined
  if (venueVars.some(Boolean)) {
    if (!venueVars.every((v) => v && isAddress(v))) {
      throw new Error('SERVICE_CONTRACTS__TREASURY_{WAR,USDC,ROUTER,ORACLE}: set all four addresses or none')
    }
    const [war, usdc, router, oracle] = venueVars as Address[]
    treasury = { war, usdc, router, oracle } as TreasuryVenue
  }
  const params: DeployContractsParameters = {
    rpcUrl,
    deployerKey,
    roles: {
      admin: env.SERVICE_CONTRACTS__ADMIN ? (addressList(env.SERVICE_CONTRACTS__ADMIN, 'SERVICE_CONTRACTS__ADMIN')?.[0]) : undefined,
      attestors: addressList(env.SERVICE_CONTRACTS__ATTESTORS, 'SERVICE_CONTRACTS__ATTESTORS'),
      governors: addressList(env.SERVICE_CONTRACTS__GOVERNORS, 'SERVICE_CONTRACTS__GOVERNORS'),
      harvesters: addressList(env.SERVICE_CONTRACTS__HARVESTERS, 'SERVICE_CONTRACTS__HARVESTERS'),
    },
    treasury,
    dataDir: resolve(flag(argv, '--data-dir') ?? defaultDataDir()),
  }
  const deployment = argv.includes('--reuse') ? await deployOrReuse(params) : await deployContracts(params)
  console.log(JSON.stringify(deployment, null, 2))
  console.log(`written to ${deploymentPath(params.dataDir as string, deployment.chainId)}`)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`deploy failed: ${(err as { shortMessage?: string }).shortMessage ?? (err instanceof Error ? err.message : String(err))}`)
    process.exit(1)
  })
}
