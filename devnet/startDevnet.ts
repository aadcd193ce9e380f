/**
 * Starts every devnet peer and describes them in `<dataDir>/devnet.json`:
 *   Anvil chain 8453 ("local Base") and chain 1, each with the devnet USDC; the x402 facilitator; the
 *   Turbo-compatible storage upstream; the Arweave gateway peer; the algod node; the model registry.
 * On first start it makes the service's keys and keeps them under `<dataDir>/devnet/`: an Arweave JWK
 * (pre-funded in the upstream), an EVM pay-to key and an Algorand account (funded and opted in to the ASA),
 * the facilitator/algod/admin tokens, and the shadow-overlord tier's devnet overlord key (a TEST key: it exists
 * only so the admin tier works offline) and `SHADOW_JWT_SECRET` — so the gateway's configuration is stable
 * across restarts. A keys file from before a key existed gains it on the next start.
 * `ports: 'free'` puts every peer on a free port (tests); the default is docs/design.md's ports.
 * Where no Anvil binary exists for the platform (devnet/chains/foundryBinary.ts), it says so in one log line
 * and starts the rest: without the EVM chains and the x402 facilitator (which settles on them), `info.chains`
 * is empty, `info.facilitator` absent and `info.evm` false; the Algorand node, the Arweave gateway and the
 * storage upstream (without its EVM top-up currencies) run as usual.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import algosdk from 'algosdk'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { anvilAccount, ANVIL_MNEMONIC, FACILITATOR_INDEX, payerAccounts } from './accounts.js'
import { ALGO_CREATOR_INDEX, ALGO_PAYER_INDEXES, ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from './algod/algoAccounts.js'
import { OTHER_ASA_ID, USDC_ASA_ID } from './algod/AlgoLedger.js'
import { startAlgod, type AlgodPeer } from './algod/startAlgod.js'
import { startArweaveGateway, type ArweaveGatewayPeer } from './arweave/startArweaveGateway.js'
import { foundryBinary, type FoundryBinary } from './chains/foundryBinary.js'
import { rpc } from './chains/startAnvil.js'
import { DEFAULT_PAYER_USDC, startChain, type LocalChain } from './chains/startChain.js'
import { startFacilitator, type FacilitatorPeer } from './facilitator/startFacilitator.js'
import { arweaveAddress, loadOrCreateArweaveJwk } from './testing/arweaveKey.js'
import { DEFAULT_PORTS, type DevnetPorts } from './ports.js'
import { startRegistry, type RegistryPeer } from './registry/startRegistry.js'
import { DEFAULT_PRICING } from './upstream/pricing.js'
import { startUpstream, type UpstreamOptions, type UpstreamPeer } from './upstream/startUpstream.js'

/** USDC minted to the service key on each chain (its own funds for upstream top-ups). */
export const SERVICE_TOP_UP_USDC = 1_000n * 10n ** 6n

export interface DevnetOptions {
  dataDir: string
  ports?: Partial<DevnetPorts> | 'free'
  /** Arweave block interval (ms), default 2000. */
  blockIntervalMs?: number
  /** Algorand round interval (ms), default 1000. */
  roundIntervalMs?: number
  /** Winc credited to the service's Arweave address on first start (default 1e15 ≈ $5,000 at the default rate). */
  serviceWinc?: bigint
  /**
   * Also deploy the service's contracts (seed 4.8: StorageAttest, ReceiptBatches, Treasury with a mock venue)
   * on local Base with contracts/deploy.ts, in a child process after the peers are up, the service key being
   * deployer and holder of every role. `contractsReady` settles when done; devnet.json then gains `contracts`.
   */
  deployContracts?: boolean
  /** The Anvil binary to use (tests pass another platform's lookup); default: this platform's. */
  anvil?: FoundryBinary
  log?: (line: string) => void
}

interface ServiceKeys {
  evm: { address: `0x${string}`; privateKey: `0x${string}` }
  algorand: { address: string; mnemonic: string }
  facilitatorToken: string
  algodToken: string
  adminToken: string
  /** Devnet overlord (TEST key) of the shadow-overlord tier: `SHADOW_OVERLORD_ADDRESS` is its address. */
  overlord: { address: `0x${string}`; privateKey: `0x${string}` }
  /** `SHADOW_JWT_SECRET`: 32 random bytes, hex. */
  shadowJwtSecret: string
  /** `SERVICE_X402__BATCH__AUTHORIZER_KEY`: signs the gateway's batch-settlement claims and refunds. */
  batchAuthorizer: { address: `0x${string}`; privateKey: `0x${string}` }
}

export interface DevnetInfo {
  version: 1
  startedAt: number
  dataDir: string
  /** False when this platform has no Anvil binary: then `chains` is empty and `facilitator` absent (a devnet.json from before this field had Anvil). */
  evm: boolean
  chains: Record<'eip155:8453' | 'eip155:1', { chainId: number; rpcUrl: string; usdc: `0x${string}`; usdcDecimals: 6; eip712: { name: 'USD Coin'; version: '2' } }>
  facilitator: { url: string; token: string; signer: `0x${string}` }
  storage: {
    paymentUrl: string
    uploadUrl: string
    gatewayUrl: string
    adminToken: string
    depositAddress: `0x${string}`
    topUpCurrencies: Record<string, string>
    pricing: { wincPerGiB: string; fiat: Record<string, number>; freeBytes: number }
    blockIntervalMs: number
  }
  algorand: { url: string; token: string; genesisId: string; genesisHash: string; network: string; usdcAsaId: number; /** A second ASA (payers hold it, the service is opted in): the wrong asset. */ otherAsaId: number; roundIntervalMs: number }
  /**
   * The model registry (OCI distribution, as registry.ollama.ai): `host` is what `MODELSERVER_REGISTRIES` lists and
   * a model name starts with; `models` are the names a model server pulls (`<host>/library/tiny-chat:latest`).
   */
  registry: { url: string; host: string; models: string[] }
  service: {
    payToEvm: `0x${string}`
    evmPrivateKey: `0x${string}`
    payToAlgorand: string
    algorandMnemonic: string
    arweaveAddress: string
    arweaveJwkPath: string
  }
  accounts: {
    evmMnemonic: string
    evm: { role: string; index: number; address: `0x${string}`; privateKey: `0x${string}`; usdc: string }[]
    algorand: { role: string; address: string; mnemonic: string; microAlgos: string; usdc: string }[]
  }
  /**
   * The shadow-overlord tier on the devnet: the overlord's TEST key (sign challenges and the vault unlock
   * message with it) and the gateway's `SHADOW_JWT_SECRET`. `npm start` also writes flow A's unlock proof.
   */
  shadow: { overlord: { address: `0x${string}`; privateKey: `0x${string}`; testKey: true }; jwtSecret: string }
  /** Gateway configuration (docs/design.md names) wired to this devnet. */
  env: Record<string, string>
  /** The service contracts on local Base, once deployed (`deployContracts`). */
  contracts?: Record<string, unknown>
}

export interface DevnetPeers {
  base: LocalChain
  mainnet: LocalChain
  facilitator: FacilitatorPeer
  algod: AlgodPeer
  upstream: UpstreamPeer
  arweave: ArweaveGatewayPeer
  registry: RegistryPeer
}

export interface Devnet {
  info: DevnetInfo
  file: string
  /** The running peers (tests: `peers.upstream.fail()`, `peers.arweave.mine()`, `peers.algod.advance()`). */
  peers: DevnetPeers
  /** Settles once the service contracts are deployed (undefined when not asked for or when it failed). */
  contractsReady: Promise<Record<string, unknown> | undefined>
  /** Stops the storage upstream (connections refused) until `startUpstream()` brings it back on the same port and data. */
  stopUpstream(): Promise<void>
  startUpstream(): Promise<void>
  close(): Promise<void>
}

function writeJsonAtomic(path: string, value: unknown, mode?: number): void {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, mode ? { mode } : undefined)
  renameSync(tmp, path)
}

function newEvmKey(): { address: `0x${string}`; privateKey: `0x${string}` } {
  const pk = generatePrivateKey()
  return { address: privateKeyToAccount(pk).address, privateKey: pk }
}

/** Loads the service keys, making (and keeping) whichever are missing: all of them on first start. */
export function loadOrCreateServiceKeys(path: string): ServiceKeys {
  const stored = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Partial<ServiceKeys>) : {}
  const algo = algosdk.generateAccount()
  const fresh: ServiceKeys = {
    evm: newEvmKey(),
    algorand: { address: algo.addr.toString(), mnemonic: algosdk.secretKeyToMnemonic(algo.sk) },
    facilitatorToken: randomBytes(24).toString('hex'),
    algodToken: randomBytes(32).toString('hex'),
    adminToken: randomBytes(16).toString('hex'),
    overlord: newEvmKey(),
    shadowJwtSecret: randomBytes(32).toString('hex'),
    batchAuthorizer: newEvmKey(),
  }
  const keys = { ...fresh, ...stored } as ServiceKeys
  if (Object.keys(fresh).some((k) => !(k in stored))) writeJsonAtomic(path, keys, 0o600)
  return keys
}

/** Starts every peer. On failure, whatever started is stopped again before the error propagates. */
export async function startDevnet(opts: DevnetOptions): Promise<Devnet> {
  const log = opts.log ?? (() => undefined)
  const dataDir = resolve(opts.dataDir)
  const devDir = join(dataDir, 'devnet')
  mkdirSync(devDir, { recursive: true })
  const ports: Partial<DevnetPorts> =
    opts.ports === 'free'
      ? { base: 0, mainnet: 0, facilitator: 0, upstream: 0, arweave: 0, algod: 0, registry: 0 }
      : { ...DEFAULT_PORTS, ...opts.ports }
  const blockIntervalMs = opts.blockIntervalMs ?? 2_000
  const roundIntervalMs = opts.roundIntervalMs ?? 1_000

  const closers: (() => Promise<void>)[] = []
  const closeAll = async () => {
    const list = closers.splice(0).reverse()
    await Promise.allSettled(list.map(async (c) => c()))
  }
  try {
    const keys = loadOrCreateServiceKeys(join(devDir, 'service-keys.json'))
    const jwkPath = join(devDir, 'arweave-jwk.json')
    const jwkP = loadOrCreateArweaveJwk(jwkPath)
    const { base, mainnet, facilitator } = await startEvmPeers(opts.anvil ?? foundryBinary('anvil'), keys, ports, closers, log)
    const algorand = await startAlgorandPeer(keys, ports, roundIntervalMs, closers)
    const { jwk, created } = await jwkP
    if (created) log(`made the service Arweave key ${jwkPath}`)
    const storage = await startStoragePeers({ keys, ports, blockIntervalMs, dataDir: join(devDir, 'storage'), serviceArweave: arweaveAddress(jwk), serviceWinc: opts.serviceWinc, base, mainnet }, closers)
    // the upstream may be stopped and started again (`stopUpstream`, `startUpstream`): close whichever runs
    let upstream = storage.upstream
    closers.push(() => upstream.close())
    const registry = await startRegistry({ port: ports.registry })
    closers.push(() => registry.close())

    const started: StartedPeers = { dataDir, keys, jwkPath, blockIntervalMs, roundIntervalMs, base, mainnet, facilitator, ...algorand, ...storage, registry, deployContracts: opts.deployContracts }
    const info = devnetInfo(started)
    const file = join(dataDir, 'devnet.json')
    writeJsonAtomic(file, info, 0o600)
    const contractsReady = opts.deployContracts && base
      ? deployServiceContracts(base.url, keys.evm, dataDir, log, closers).then((deployed) => {
          if (!deployed) return undefined
          info.contracts = deployed.contracts
          writeJsonAtomic(file, info, 0o600)
          // Said only once devnet.json holds them: whoever waits for this line then reads the file.
          log(`service contracts deployed on eip155:8453 in ${deployed.ms} ms → ${deployed.file}`)
          return deployed.contracts
        })
      : Promise.resolve(undefined)
    // Without Anvil, base/mainnet/facilitator are absent (info.evm false); the type serves the callers that have them.
    const peers = { base, mainnet, facilitator, algod: algorand.algod, upstream: storage.upstream, arweave: storage.gateway, registry } as DevnetPeers
    return {
      info,
      file,
      peers,
      contractsReady,
      stopUpstream: () => upstream.close(),
      startUpstream: async () => {
        upstream = await startUpstream(storage.upstreamOpts)
        peers.upstream = upstream
      },
      close: closeAll,
    }
  } catch (e) {
    await closeAll()
    throw e
  }
}

type Closers = (() => Promise<void>)[]

/** Everything the devnet started, from which devnet.json is written. */
type StartedPeers = {
  dataDir: string
  keys: ServiceKeys
  jwkPath: string
  blockIntervalMs: number
  roundIntervalMs: number
  base: LocalChain | undefined
  mainnet: LocalChain | undefined
  facilitator: FacilitatorPeer | undefined
  algod: Awaited<ReturnType<typeof startAlgod>>
  algoCreator: ReturnType<typeof algoTestAccount>
  algoPayers: ReturnType<typeof algoTestAccount>[]
  gateway: Awaited<ReturnType<typeof startArweaveGateway>>
  upstream: Awaited<ReturnType<typeof startUpstream>>
  upstreamOpts: UpstreamOptions
  serviceArweave: string
  depositAddress: `0x${string}`
  registry: Awaited<ReturnType<typeof startRegistry>>
  deployContracts: boolean | undefined
}

/** Local Base and Ethereum (Anvil) and the x402 facilitator over them; none of them without Anvil. */
async function startEvmPeers(anvil: ReturnType<typeof foundryBinary>, keys: ServiceKeys, ports: Partial<DevnetPorts>, closers: Closers, log: (line: string) => void): Promise<Pick<StartedPeers, 'base' | 'mainnet' | 'facilitator'>> {
  if (anvil.path === undefined) {
    log(`${anvil.reason}; the EVM chains and the x402 facilitator are not started, the other peers are`)
    return { base: undefined, mainnet: undefined, facilitator: undefined }
  }
  const start = Date.now()
  // The service key also holds 1,000 USDC on each chain: its own funds for topping up the upstream credit.
  const chainP = (chainId: number, port: number | undefined) =>
    startChain({ chainId, port, fund: [{ address: keys.evm.address, amount: SERVICE_TOP_UP_USDC }] }).then((c) => {
      closers.push(() => c.close())
      return c
    })
  const [base, mainnet] = (await Promise.all([chainP(8453, ports.base), chainP(1, ports.mainnet)])) as [LocalChain, LocalChain]
  log(`chains up in ${Date.now() - start} ms`)
  // Gas money for the service's EVM key (batch commits, attestations).
  await Promise.all([base, mainnet].map((c) => rpc(c.url, 'anvil_setBalance', [keys.evm.address, '0x3635C9ADC5DEA00000'])))
  const facilitator = await startFacilitator({
    port: ports.facilitator,
    token: keys.facilitatorToken,
    signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey,
    chains: [
      { chainId: 8453, rpcUrl: base.url },
      { chainId: 1, rpcUrl: mainnet.url },
    ],
  })
  closers.push(() => facilitator.close())
  return { base, mainnet, facilitator }
}

/** The algod node with the USDC reserve, the funded payers and the service's account. */
async function startAlgorandPeer(keys: ServiceKeys, ports: Partial<DevnetPorts>, roundIntervalMs: number, closers: Closers): Promise<Pick<StartedPeers, 'algod' | 'algoCreator' | 'algoPayers'>> {
  const algoCreator = algoTestAccount(ALGO_CREATOR_INDEX)
  const algoPayers = ALGO_PAYER_INDEXES.map((i) => algoTestAccount(i))
  const algod = await startAlgod({
    port: ports.algod,
    token: keys.algodToken,
    roundIntervalMs,
    assetCreator: algoCreator.address,
    accounts: [
      // payers also hold the second ASA, and the service is opted in to it, so a payment in the wrong
      // asset confirms on the devnet and reaches the gateway's `wrong_asset` check
      ...algoPayers.map((a) => ({ address: a.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC, otherAsa: ALGO_PAYER_USDC })),
      { address: keys.algorand.address, microAlgos: 10_000_000n, usdc: 0n, otherAsa: 0n },
    ],
  })
  closers.push(() => algod.close())
  return { algod, algoCreator, algoPayers }
}

type StorageSetup = {
  keys: ServiceKeys
  ports: Partial<DevnetPorts>
  blockIntervalMs: number
  dataDir: string
  serviceArweave: string
  serviceWinc: bigint | undefined
  base: LocalChain | undefined
  mainnet: LocalChain | undefined
}

/** The Arweave gateway and the Turbo-like upstream on one item store; top-ups paid on the local chains. */
async function startStoragePeers(setup: StorageSetup, closers: Closers): Promise<Pick<StartedPeers, 'gateway' | 'upstream' | 'upstreamOpts' | 'serviceArweave' | 'depositAddress'>> {
  const { keys, ports, blockIntervalMs, base, mainnet, serviceArweave } = setup
  const depositAddress = anvilAccount(9).address
  const gateway = await startArweaveGateway({ port: ports.arweave, dataDir: setup.dataDir, blockIntervalMs })
  closers.push(() => gateway.close())
  const upstreamOpts: UpstreamOptions = {
    port: ports.upstream,
    dataDir: setup.dataDir,
    blockIntervalMs,
    adminToken: keys.adminToken,
    gatewayUrl: gateway.url,
    prefund: { [serviceArweave]: setup.serviceWinc ?? 10n ** 15n },
    funding: {
      depositAddress,
      currencies:
        base && mainnet
          ? {
              'base-usdc': { chainId: 8453, rpcUrl: base.url, tokenAddress: base.tokenAddress },
              usdc: { chainId: 1, rpcUrl: mainnet.url, tokenAddress: mainnet.tokenAddress },
            }
          : {},
    },
  }
  const upstream = await startUpstream(upstreamOpts)
  // a restart of the upstream (the devnet's `startUpstream()`) takes the same port
  upstreamOpts.port = upstream.port
  return { gateway, upstream, upstreamOpts, serviceArweave, depositAddress }
}

function chainInfo(c: LocalChain) {
  return {
  chainId: c.chainId,
  rpcUrl: c.url,
  usdc: c.tokenAddress,
  usdcDecimals: 6 as const,
  eip712: { name: 'USD Coin' as const, version: '2' as const },
  }
}

/** devnet.json: every peer's URL, the test accounts and keys, and the environment the gateway reads. */
function devnetInfo(p: StartedPeers): DevnetInfo {
  const { dataDir, keys, jwkPath, blockIntervalMs, roundIntervalMs, base, mainnet, facilitator, algod, upstream, gateway, registry, serviceArweave, depositAddress } = p
  const evm = base !== undefined
  return {
    version: 1,
    startedAt: Math.floor(Date.now() / 1000),
    dataDir,
    evm,
    // Without Anvil these stay empty/absent (`evm: false`); the type keeps them required for the callers
    // (tests, npm start) that run where Anvil exists.
    chains: (base && mainnet ? { 'eip155:8453': chainInfo(base), 'eip155:1': chainInfo(mainnet) } : {}) as DevnetInfo['chains'],
    facilitator: (facilitator ? { url: facilitator.url, token: keys.facilitatorToken, signer: facilitator.signer } : undefined) as DevnetInfo['facilitator'],
    storage: {
      paymentUrl: upstream.url,
      uploadUrl: upstream.url,
      gatewayUrl: gateway.url,
      adminToken: keys.adminToken,
      depositAddress,
      topUpCurrencies: evm ? { 'base-usdc': 'eip155:8453', usdc: 'eip155:1' } : {},
      pricing: {
        wincPerGiB: upstream.pricing.wincPerGiB.toString(),
        fiat: upstream.pricing.fiat,
        freeBytes: upstream.pricing.freeBytes ?? DEFAULT_PRICING.freeBytes,
      },
      blockIntervalMs,
    },
    algorand: {
      url: algod.url,
      token: keys.algodToken,
      genesisId: algod.genesisId,
      genesisHash: algod.genesisHash,
      network: `algorand:${algod.genesisHash}`,
      usdcAsaId: Number(USDC_ASA_ID),
      otherAsaId: Number(OTHER_ASA_ID),
      roundIntervalMs,
    },
    registry: { url: registry.url, host: registry.host, models: registry.models },
    service: {
      payToEvm: keys.evm.address,
      evmPrivateKey: keys.evm.privateKey,
      payToAlgorand: keys.algorand.address,
      algorandMnemonic: keys.algorand.mnemonic,
      arweaveAddress: serviceArweave,
      arweaveJwkPath: jwkPath,
    },
    accounts: devnetAccounts(p),
    shadow: {
      overlord: { address: keys.overlord.address, privateKey: keys.overlord.privateKey, testKey: true },
      jwtSecret: keys.shadowJwtSecret,
    },
    env: gatewayEnv(p),
  }
}

/** The test accounts of both families, with their roles and funds. */
function devnetAccounts({ algoCreator, algoPayers }: StartedPeers): DevnetInfo['accounts'] {
  return {
    evmMnemonic: ANVIL_MNEMONIC,
    evm: [
      { role: 'token-owner', ...pick(anvilAccount(0)), usdc: '0' },
      { role: 'facilitator', ...pick(anvilAccount(FACILITATOR_INDEX)), usdc: '0' },
      ...payerAccounts().map((a) => ({ role: 'payer', ...pick(a), usdc: DEFAULT_PAYER_USDC.toString() })),
    ],
    algorand: [
      { role: 'usdc-reserve', address: algoCreator.address, mnemonic: algoCreator.mnemonic, microAlgos: (10n ** 15n).toString(), usdc: 'rest' },
      ...algoPayers.map((a) => ({ role: 'payer', address: a.address, mnemonic: a.mnemonic, microAlgos: ALGO_PAYER_MICROALGOS.toString(), usdc: ALGO_PAYER_USDC.toString() })),
    ],
  }
}

/** The environment that points the gateway at the devnet (`npm start` passes it on). */
function gatewayEnv(p: StartedPeers): DevnetInfo['env'] {
  const { dataDir, keys, jwkPath, base, mainnet, facilitator, algod, upstream, gateway, registry } = p
  const opts = { deployContracts: p.deployContracts }
  return {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_X402__PAY_TO_ALGORAND: keys.algorand.address,
    SERVICE_ALGOD__URL: algod.url,
    SERVICE_ALGOD__TOKEN: keys.algodToken,
    SERVICE_ALGOD__GENESIS_HASH: algod.genesisHash,
    SERVICE_STORAGE__PAYMENT_URL: upstream.url,
    SERVICE_STORAGE__UPLOAD_URL: upstream.url,
    SERVICE_STORAGE__GATEWAY_URL: gateway.url,
    SERVICE_STORAGE__ARWEAVE_JWK_PATH: jwkPath,
    // The shadow-overlord tier (admin): the devnet overlord TEST key's address and the bearer secret.
    SHADOW_OVERLORD_ADDRESS: keys.overlord.address,
    SHADOW_JWT_SECRET: keys.shadowJwtSecret,
    // The model server may pull from the devnet registry besides Ollama's (names on Ollama's host still go there).
    MODELSERVER_REGISTRIES: `registry.ollama.ai,${registry.host}`,
    ...(base && mainnet && facilitator
      ? {
          FACILITATOR_TOKEN: keys.facilitatorToken,
          SERVICE_X402__FACILITATOR_URL: facilitator.url,
          // x402 `upto` permits name the facilitator that may settle them: its settlement signer
          SERVICE_X402__UPTO_FACILITATOR_ADDRESS: facilitator.signer,
          // x402 `batch-settlement` (x402's escrow on both chains): the key that signs the gateway's claims and refunds
          SERVICE_X402__BATCH__AUTHORIZER_KEY: keys.batchAuthorizer.privateKey,
          SERVICE_X402__PAY_TO_EVM: keys.evm.address,
          SERVICE_X402__ASSET__EIP155_8453: base.tokenAddress,
          SERVICE_X402__ASSET__EIP155_1: mainnet.tokenAddress,
          // The daily receipt batch and the verifier's StorageAttest on local Base; the contract addresses are
          // read from <data dir>/contracts-8453.json once contracts/deploy.ts (in the background) wrote it.
          SERVICE_BATCH__RPC_URL: base.url,
          // Automatic top-up of the upstream credit from the service's own USDC on local Base (`base-usdc`).
          SERVICE_STORAGE__TOPUP_KEY: keys.evm.privateKey,
          SERVICE_STORAGE__TOPUP_RPC_URL: base.url,
          SERVICE_STORAGE__ATTEST_RPC_URL: base.url,
          // Login on local Base: smart-contract wallets (EIP-1271 / EIP-6492) are verified through its RPC.
          SERVICE_LOGIN__CHAIN_ID: String(base.chainId),
          SERVICE_LOGIN__RPC_URL: base.url,
          // Payments an instance died settling are checked on each EVM rail's chain (docs/reliability.md).
          SERVICE_X402__RPC_URL__EIP155_8453: base.url,
          SERVICE_X402__RPC_URL__EIP155_1: mainnet.url,
          ...(opts.deployContracts ? { SERVICE_BATCH__ATTESTOR_KEY: keys.evm.privateKey, SERVICE_STORAGE__ATTESTOR_KEY: keys.evm.privateKey } : {}),
        }
      : {}),
  }
}

/**
 * Runs `contracts/deploy.ts` (the contracts' own deploy script) against local Base in a child process, so
 * its synchronous solc compile never stalls the peers. Failures are reported, not fatal: the peers stay up.
 */
async function deployServiceContracts(
  rpcUrl: string,
  service: ServiceKeys['evm'],
  dataDir: string,
  log: (l: string) => void,
  closers: (() => Promise<void>)[],
): Promise<{ contracts: Record<string, unknown>; ms: number; file: string } | undefined> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
  const script = join(root, 'contracts/deploy.ts')
  if (!existsSync(script)) return undefined
  const t0 = Date.now()
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/exitWithParent.mjs', 'contracts/deploy.ts', '--rpc', rpcUrl, '--data-dir', dataDir],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        ...process.env,
        PAY2STORE_EXIT_WITH_PARENT: '1',
        SERVICE_CONTRACTS__DEPLOYER_KEY: service.privateKey,
        SERVICE_CONTRACTS__ATTESTORS: service.address,
        SERVICE_CONTRACTS__GOVERNORS: service.address,
        SERVICE_CONTRACTS__HARVESTERS: service.address,
      },
    },
  )
  let stderr = ''
  child.stdout?.resume()
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
  const done = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  closers.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await done
  })
  const code = await done
  const file = join(dataDir, 'contracts-8453.json')
  if (code !== 0 || !existsSync(file)) {
    if (code !== null) log(`service contracts not deployed (contracts/deploy.ts exited ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`)
    return undefined
  }
  return { contracts: JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>, ms: Date.now() - t0, file }
}

function pick(a: { index: number; address: `0x${string}`; privateKey: `0x${string}` }) {
  return { index: a.index, address: a.address, privateKey: a.privateKey }
}
