/**
 * Test harness for paid storage: the devnet peers on free ports, and the real gateway over them
 * (`startAppGateway`: `createApp` with the storage domain, every response validated against the document).
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { startArweaveGateway, type ArweaveGatewayPeer } from '../../devnet/arweave/startArweaveGateway.js'
import { startChain, type LocalChain } from '../../devnet/chains/startChain.js'
import { startFacilitator, type FacilitatorPeer } from '../../devnet/facilitator/startFacilitator.js'
import { arweaveAddress, generateArweaveJwk, type ArweaveJwk } from '../../devnet/testing/arweaveKey.js'
import { startUpstream, type UpstreamPeer } from '../../devnet/upstream/startUpstream.js'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/loadConfig.js'
import { createGatewayServer } from '../../src/createGatewayServer.js'
import { initBatch } from '../../src/handlers/batch/index.js'
import { initStorage } from '../../src/handlers/storage/index.js'
import type { DomainEntry } from '../../src/services/DomainPlugin.js'
import type { Services } from '../../src/handlers/types.js'
import type { ResponseValidationReport } from '../../src/shared/http/index.js'
import type { Ledger } from '../../src/storage/Ledger.js'
import type { StorageService } from '../../src/storage/StorageService.js'
import { StorageWorker } from '../../src/storage/StorageWorker.js'
import type { RailPlugin, RailRegistry } from '../../src/x402/RailRegistry.js'

/** Random, as the gateway refuses a typed token at start. */
export const FACILITATOR_TOKEN = randomBytes(32).toString('hex')
export const PAY_TO_EVM = anvilAccount(7).address
/** The upstream's deposit address for top-ups (Anvil #9, as on the devnet). */
export const TOP_UP_DEPOSIT = anvilAccount(9).address

export type EvmPeers = {
  dir: string
  base: LocalChain
  mainnet: LocalChain
  facilitator: FacilitatorPeer
  upstream: UpstreamPeer
  upstreamPort: number
  arweave: ArweaveGatewayPeer
  jwk: ArweaveJwk
  jwkPath: string
  restartUpstream(): Promise<void>
  close(): Promise<void>
}

export async function startEvmPeers(): Promise<EvmPeers> {
  const dir = await mkdtemp(join(tmpdir(), 'store-it-'))
  const weaveDir = join(dir, 'weave')
  const jwk = await generateArweaveJwk()
  const jwkPath = join(dir, 'arweave-jwk.json')
  await writeFile(jwkPath, JSON.stringify(jwk))
  const [base, mainnet] = await Promise.all([startChain({ chainId: 8453 }), startChain({ chainId: 1 })])
  const facilitator = await startFacilitator({
    token: FACILITATOR_TOKEN,
    chains: [
      { chainId: 8453, rpcUrl: base.url },
      { chainId: 1, rpcUrl: mainnet.url },
    ],
    signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey,
  })
  const arweave = await startArweaveGateway({ dataDir: weaveDir, blockIntervalMs: 300 })
  // top-ups are paid in USDC on local Base to Anvil #9, as on the devnet
  const upstreamOptions = {
    dataDir: weaveDir, blockIntervalMs: 300, prefund: { [arweaveAddress(jwk)]: 10n ** 15n }, gatewayUrl: arweave.url,
    funding: { depositAddress: TOP_UP_DEPOSIT, currencies: { 'base-usdc': { chainId: 8453, rpcUrl: base.url, tokenAddress: base.tokenAddress } } },
  }
  let upstream = await startUpstream(upstreamOptions)
  const upstreamPort = upstream.port
  const peers: EvmPeers = {
    dir,
    base,
    mainnet,
    facilitator,
    upstream,
    upstreamPort,
    arweave,
    jwk,
    jwkPath,
    async restartUpstream() {
      upstream = await startUpstream({ ...upstreamOptions, port: upstreamPort })
      peers.upstream = upstream
    },
    async close() {
      await Promise.allSettled([facilitator.close(), peers.upstream.close(), arweave.close()])
      await Promise.allSettled([base.close(), mainnet.close()])
      await rm(dir, { recursive: true, force: true })
    },
  }
  return peers
}

export function evmEnv(peers: EvmPeers): Record<string, string> {
  return {
    SERVICE_X402__FACILITATOR_URL: peers.facilitator.url,
    FACILITATOR_TOKEN,
    SERVICE_X402__PAY_TO_EVM: PAY_TO_EVM,
    SERVICE_X402__ASSET__EIP155_8453: peers.base.tokenAddress,
    SERVICE_X402__ASSET__EIP155_1: peers.mainnet.tokenAddress,
    // the chains a payer is checked on before its upload gets a slot (signer, nonce, funds)
    SERVICE_X402__RPC_URL__EIP155_8453: peers.base.url,
    SERVICE_X402__RPC_URL__EIP155_1: peers.mainnet.url,
    SERVICE_X402__PAY_TO_ALGORAND: 'TEBIP2BXCP75UTGVFO4W3FWLGOBBSSH6LEACRCKQBDW7XQU7IPE2LJYYKM',
    SERVICE_ALGOD__GENESIS_HASH: 'devnet-genesis-for-evm-tests',
    SERVICE_STORAGE__PAYMENT_URL: `http://127.0.0.1:${peers.upstreamPort}`,
    SERVICE_STORAGE__UPLOAD_URL: `http://127.0.0.1:${peers.upstreamPort}`,
    SERVICE_STORAGE__GATEWAY_URL: peers.arweave.url,
    SERVICE_STORAGE__ARWEAVE_JWK_PATH: peers.jwkPath,
    SERVICE_STORAGE__VERIFY_INTERVAL_MS: '1000',
    SERVICE_STORAGE__RETRY_INTERVAL_MS: '1000',
    SERVICE_STORAGE__WORKER_TICK_MS: '200',
    // the replay tests send 50 requests at once to one instance: above the default bound of 16
    // (tests/storage/bounded.integration.test.ts tests the bound itself)
    SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS: '64',
    // …all from 127.0.0.1: above the default 4 per address (tests/storage/intake.integration.test.ts tests that bound)
    SERVICE_STORAGE__UNPAID_PER_ADDRESS: '64',
  }
}

export function multipart(data: Uint8Array, filename = 'file.bin', type = 'application/octet-stream'): FormData {
  const form = new FormData()
  form.append('file', new Blob([Buffer.from(data)], { type }), filename)
  return form
}

/** The real gateway on a free port, with the services the storage tests look into. */
export type TestGateway = {
  url: string
  service: StorageService
  /** A storage worker of the test's own (started and stopped by the test; the domain's own runs with `start`). */
  worker: StorageWorker
  ledger: Ledger
  services: Services
  /** Every response that did not match openapi/gateway.yaml (each also became a 500): tests expect none. */
  validationErrors: ResponseValidationReport[]
  close(): Promise<void>
}

/**
 * The real gateway (`createApp`: the OpenAPI router, the security and validation stages, the handlers, the
 * error catalogue, every response validated against openapi/gateway.yaml in `error` mode) with the storage
 * domain only, on a free port. `SERVICE_PUBLIC_ORIGIN` must be known before the port is: a probe port is
 * reserved first. `rails` registers more payment rails before the first request, as a deployment would at start.
 */
export async function startAppGateway(
  env: Record<string, string>,
  dir: string,
  /** `domains`: the app's domain list (default: storage, with `withBatch` the receipt batch too). */
  options: { start?: boolean; withBatch?: boolean; domains?: readonly DomainEntry[]; spanExporter?: SpanExporter; rails?: (registry: RailRegistry) => void; railPlugins?: RailPlugin[] } = {},
): Promise<TestGateway> {
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const port = (probe.address() as AddressInfo).port
  await new Promise((r) => probe.close(r))
  const dataDir = join(dir, `app-${port}`)
  const fullEnv = {
    SERVICE_PORT: String(port),
    SERVICE_PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_DATABASE_URL: `sqlite:${join(dataDir, 'gateway.sqlite')}`,
    // the replay tests send 50 requests at once from one address
    SERVICE_RATE_LIMIT__MAX: '100000',
    LOG_LEVEL: 'warn',
    ...env,
  }
  const validationErrors: ResponseValidationReport[] = []
  const config = loadConfig(fullEnv)
  const gateway = await createApp({
    config,
    env: fullEnv,
    domains: options.domains ?? (options.withBatch ? [initStorage, initBatch] : [initStorage]),
    responseValidation: 'error',
    onResponseValidationError: (report) => validationErrors.push(report),
    spanExporter: options.spanExporter,
    ...(options.railPlugins ? { railPlugins: options.railPlugins } : {}),
  })
  options.rails?.(gateway.services.rails)
  if (options.start) await gateway.start()
  const server = createGatewayServer(gateway.app, config.http).listen(port, '127.0.0.1')
  await new Promise<void>((r) => server.once('listening', () => r()))
  const service = gateway.services.storage
  const worker = new StorageWorker({ service })
  return {
    url: `http://127.0.0.1:${port}`,
    service,
    worker,
    ledger: service.ledger,
    services: gateway.services,
    validationErrors,
    async close() {
      await worker.stop()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await gateway.close()
    },
  }
}

/** A stock x402 client (`@x402/core` + `@x402/evm`) paying with Anvil account `payerIndex` on `chain`. */
export type PayableChain = Pick<LocalChain, 'chain' | 'url' | 'network' | 'tokenAddress'>

export function payingClient(chain: PayableChain, payerIndex: number): x402HTTPClient {
  const pub = createPublicClient({ chain: chain.chain, transport: http(chain.url) })
  const signer = toClientEvmSigner(privateKeyToAccount(anvilAccount(payerIndex).privateKey), pub)
  const client = new x402Client((_v, accepts) => accepts.find((a) => a.network === chain.network)!)
    .register('eip155:*', new ExactEvmScheme(signer))
    .setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.tokenAddress }] })
  return new x402HTTPClient(client)
}

/** Quote, pay with a stock x402 client and store `data` through `gatewayUrl`; returns the 200 body. */
export async function payAndStoreOk(
  gatewayUrl: string,
  chain: PayableChain,
  payerIndex: number,
  data: Uint8Array,
): Promise<{ arTxId: string; sha256: string; sizeBytes: number }> {
  const first = await fetch(`${gatewayUrl}/store`, { method: 'POST', body: multipart(data) })
  if (first.status !== 402) throw new Error(`quote answered ${first.status}`)
  const http402 = payingClient(chain, payerIndex)
  const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
  const payload = await http402.createPaymentPayload(required)
  const paid = await fetch(`${gatewayUrl}/store`, { method: 'POST', body: multipart(data), headers: http402.encodePaymentSignatureHeader(payload) })
  const body = await paid.json()
  if (paid.status !== 200) throw new Error(`store answered ${paid.status}: ${JSON.stringify(body)}`)
  return body
}

/** Polls the ledger until the upload holding `arTxId` leaves `stored` (or the deadline passes). */
export async function waitForVerification(ledger: Ledger, arTxId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await ledger.db.selectFrom('storage_uploads').selectAll().where('ar_tx_id', '=', arTxId).executeTakeFirstOrThrow()
    if (row.status !== 'stored' || Date.now() > deadline) return row
    await new Promise((r) => setTimeout(r, 200))
  }
}
