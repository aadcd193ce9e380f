import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { startChain } from '../../../devnet/chains/startChain.js'

export type StoreBenchPeers = {
  /** The local Base chain with its EIP-3009 USDC (the payer is one of its funded accounts). */
  base: Awaited<ReturnType<typeof startChain>>
  /** Environment of a gateway whose paid storage uses these peers, on a free port with its own data dir. */
  env: NodeJS.ProcessEnv
  /** Temporary directory of this run (removed by the last closer). */
  dir: string
  /** Closers, newest first; callers `unshift` their own and run them all in order at the end. */
  cleanup: (() => Promise<unknown>)[]
}

/**
 * The devnet peers of paid storage for the store benchmarks (local Base, facilitator, Turbo-like upstream,
 * Arweave gateway), in this process, and the environment of a gateway that uses them. The devnet modules are
 * imported here, not at the top of a bench, so a bench's `--gateway` child never loads them.
 */
export async function startStoreBenchPeers(prefix: string): Promise<StoreBenchPeers> {
  const { anvilAccount, FACILITATOR_INDEX } = await import('../../../devnet/accounts.js')
  const { startChain } = await import('../../../devnet/chains/startChain.js')
  const { startFacilitator } = await import('../../../devnet/facilitator/startFacilitator.js')
  const { startUpstream } = await import('../../../devnet/upstream/startUpstream.js')
  const { startArweaveGateway } = await import('../../../devnet/arweave/startArweaveGateway.js')
  const { arweaveAddress, generateArweaveJwk } = await import('../../../devnet/testing/arweaveKey.js')

  const dir = await mkdtemp(join(tmpdir(), prefix))
  const cleanup: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })]
  try {
    const jwk = await generateArweaveJwk()
    const jwkPath = join(dir, 'jwk.json')
    await writeFile(jwkPath, JSON.stringify(jwk))
    const base = await startChain({ chainId: 8453 })
    cleanup.unshift(() => base.close())
    const facilitatorToken = randomBytes(32).toString('hex') // a weak token refuses the start
    const facilitator = await startFacilitator({ token: facilitatorToken, chains: [{ chainId: 8453, rpcUrl: base.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
    cleanup.unshift(() => facilitator.close())
    const weave = join(dir, 'weave')
    const arweave = await startArweaveGateway({ dataDir: weave, blockIntervalMs: 500 })
    cleanup.unshift(() => arweave.close())
    const upstream = await startUpstream({ dataDir: weave, prefund: { [arweaveAddress(jwk)]: 10n ** 16n } })
    cleanup.unshift(() => upstream.close())

    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SERVICE_PORT: String(port),
      SERVICE_PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
      SERVICE_DATA_DIR: join(dir, 'gw'),
      SERVICE_DATABASE_URL: `sqlite:${join(dir, 'gw', 'gw.sqlite')}`,
      SERVICE_X402__FACILITATOR_URL: facilitator.url,
      FACILITATOR_TOKEN: facilitatorToken,
      SERVICE_X402__PAY_TO_EVM: anvilAccount(7).address,
      SERVICE_X402__ASSET__EIP155_8453: base.tokenAddress,
      SERVICE_X402__ASSET__EIP155_1: base.tokenAddress,
      SERVICE_X402__PAY_TO_ALGORAND: 'TEBIP2BXCP75UTGVFO4W3FWLGOBBSSH6LEACRCKQBDW7XQU7IPE2LJYYKM',
      SERVICE_ALGOD__GENESIS_HASH: 'bench-genesis',
      SERVICE_STORAGE__PAYMENT_URL: upstream.url,
      SERVICE_STORAGE__UPLOAD_URL: upstream.url,
      SERVICE_STORAGE__GATEWAY_URL: arweave.url,
      SERVICE_STORAGE__ARWEAVE_JWK_PATH: jwkPath,
    }
    return { base, env, cleanup, dir }
  } catch (error) {
    for (const fn of cleanup) await fn().catch(() => undefined)
    throw error
  }
}
