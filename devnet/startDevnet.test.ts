/** startDevnet in-process on free ports: the wiring of devnet.json, both EVM networks, upstream stop/start. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { x402Client } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localChain, usdcArtifact } from './chains/startChain.js'
import { loadOrCreateServiceKeys, SERVICE_TOP_UP_USDC, startDevnet, type Devnet, type DevnetInfo } from './startDevnet.js'

describe('startDevnet', () => {
  let dir: string
  let devnet: Devnet
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'devnet-all-'))
    devnet = await startDevnet({ dataDir: dir, ports: 'free', blockIntervalMs: 200, roundIntervalMs: 200 })
  }, 90_000)
  afterAll(async () => {
    await devnet?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('writes devnet.json with every URL, token and account', async () => {
    const info = JSON.parse(readFileSync(join(dir, 'devnet.json'), 'utf8')) as DevnetInfo
    expect(info).toEqual(JSON.parse(JSON.stringify(devnet.info)))
    expect(Object.keys(info.env).sort()).toEqual(
      [
        'FACILITATOR_TOKEN', 'SERVICE_ALGOD__GENESIS_HASH', 'SERVICE_ALGOD__TOKEN', 'SERVICE_ALGOD__URL', 'SERVICE_BATCH__RPC_URL',
        'MODELSERVER_REGISTRIES', 'SERVICE_DATA_DIR', 'SERVICE_LOGIN__CHAIN_ID', 'SERVICE_LOGIN__RPC_URL', 'SERVICE_STORAGE__ARWEAVE_JWK_PATH', 'SERVICE_STORAGE__ATTEST_RPC_URL', 'SERVICE_STORAGE__GATEWAY_URL', 'SERVICE_STORAGE__PAYMENT_URL',
        'SERVICE_STORAGE__TOPUP_KEY', 'SERVICE_STORAGE__TOPUP_RPC_URL', 'SERVICE_STORAGE__UPLOAD_URL', 'SERVICE_X402__ASSET__EIP155_1', 'SERVICE_X402__ASSET__EIP155_8453',
        'SERVICE_X402__BATCH__AUTHORIZER_KEY', 'SERVICE_X402__FACILITATOR_URL', 'SERVICE_X402__PAY_TO_ALGORAND', 'SERVICE_X402__PAY_TO_EVM',
        'SERVICE_X402__RPC_URL__EIP155_1', 'SERVICE_X402__RPC_URL__EIP155_8453', 'SERVICE_X402__UPTO_FACILITATOR_ADDRESS',
        'SHADOW_JWT_SECRET', 'SHADOW_OVERLORD_ADDRESS',
      ].sort(),
    )
    // login on local Base, so smart-contract wallets are verified through its RPC
    expect(info.env.SERVICE_LOGIN__RPC_URL).toBe(info.chains['eip155:8453'].rpcUrl)
    expect(info.env.SERVICE_LOGIN__CHAIN_ID).toBe('8453')
    // payments an instance died settling are checked on each EVM rail's own chain
    expect(info.env.SERVICE_X402__RPC_URL__EIP155_8453).toBe(info.chains['eip155:8453'].rpcUrl)
    expect(info.env.SERVICE_X402__RPC_URL__EIP155_1).toBe(info.chains['eip155:1'].rpcUrl)
    // the shadow-overlord tier: a devnet overlord TEST key and a 32-byte bearer secret, kept with the service keys
    expect(info.shadow.overlord).toMatchObject({ testKey: true, address: privateKeyToAccount(info.shadow.overlord.privateKey).address })
    expect(info.env.SHADOW_OVERLORD_ADDRESS).toBe(info.shadow.overlord.address)
    expect(info.env.SHADOW_JWT_SECRET).toMatch(/^[0-9a-f]{64}$/)
    expect(info.env.SHADOW_JWT_SECRET).toBe(info.shadow.jwtSecret)
    const kept = JSON.parse(readFileSync(join(dir, 'devnet', 'service-keys.json'), 'utf8')) as Record<string, unknown>
    expect(kept).toMatchObject({ overlord: { address: info.shadow.overlord.address }, shadowJwtSecret: info.shadow.jwtSecret })
    // the model registry: allow-listed beside Ollama's, and serving the model it names
    expect(info.env.MODELSERVER_REGISTRIES).toBe(`registry.ollama.ai,${info.registry.host}`)
    expect(info.registry.models[0]).toBe(`${info.registry.host}/library/tiny-chat:latest`)
    expect((await fetch(`${info.registry.url}/v2/library/tiny-chat/manifests/latest`)).headers.get('docker-content-digest')).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(info.accounts.evm.filter((a) => a.role === 'payer')).toHaveLength(4)
    expect(info.accounts.algorand.filter((a) => a.role === 'payer')).toHaveLength(3)
    // upstream top-up: the service's own EVM key on local Base, funded with the canonical USDC there
    const base = info.chains['eip155:8453']
    expect(privateKeyToAccount(info.env.SERVICE_STORAGE__TOPUP_KEY as `0x${string}`).address).toBe(info.service.payToEvm)
    expect(info.env.SERVICE_STORAGE__TOPUP_RPC_URL).toBe(base.rpcUrl)
    expect(info.env.SERVICE_X402__ASSET__EIP155_8453).toBe(base.usdc)
    const pub = createPublicClient({ chain: localChain(base.chainId, base.rpcUrl), transport: http(base.rpcUrl) })
    const held = (await pub.readContract({ address: base.usdc, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [info.service.payToEvm] })) as bigint
    expect(held >= SERVICE_TOP_UP_USDC).toBe(true)
  })

  it.each(['eip155:8453', 'eip155:1'] as const)('a reference x402 client pays the service on %s', async (network) => {
    const info = devnet.info
    const c = info.chains[network]
    const payer = info.accounts.evm.find((a) => a.role === 'payer')!
    const pub = createPublicClient({ chain: localChain(c.chainId, c.rpcUrl), transport: http(c.rpcUrl) })
    const client = new x402Client()
      .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(payer.privateKey), pub)))
      .setSpendControls({ allowedAssets: [{ network, asset: c.usdc }] })
    const req: PaymentRequirements = {
      scheme: 'exact', network, amount: '250000', asset: c.usdc, payTo: info.service.payToEvm, maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    }
    const paymentPayload = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://localhost:8000/store', description: '1 byte', mimeType: 'application/octet-stream' }, accepts: [req] })
    const bal = () => pub.readContract({ address: c.usdc, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [info.service.payToEvm] }) as Promise<bigint>
    const before = await bal()
    const res = await fetch(`${info.facilitator.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${info.facilitator.token}` },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: req }),
    })
    expect(((await res.json()) as { success: boolean }).success).toBe(true)
    expect((await bal()) - before).toBe(250000n)
  })

  it('the upstream can be stopped and started again on the same port with its balances', async () => {
    const url = devnet.info.storage.paymentUrl
    const addr = devnet.info.service.arweaveAddress
    const before = await (await fetch(`${url}/v1/balance/${addr}`)).text()
    await devnet.stopUpstream()
    await expect(fetch(`${url}/v1/balance/${addr}`)).rejects.toThrow()
    await devnet.startUpstream()
    expect(devnet.peers.upstream.url).toBe(url)
    expect(await (await fetch(`${url}/v1/balance/${addr}`)).text()).toBe(before)
    // and the admin hook makes it fail over HTTP (for a gateway running in another process)
    const fail = await fetch(`${url}/__devnet/fail`, { method: 'POST', headers: { authorization: `Bearer ${devnet.info.storage.adminToken}` }, body: '{"scope":"all"}' })
    expect(fail.status).toBe(200)
    expect((await fetch(`${url}/v1/rates`)).status).toBe(503)
    expect((await fetch(`${url}/__devnet/recover`, { method: 'POST' })).status).toBe(401)
    await fetch(`${url}/__devnet/recover`, { method: 'POST', headers: { authorization: `Bearer ${devnet.info.storage.adminToken}` } })
    expect((await fetch(`${url}/v1/rates`)).status).toBe(200)
  })
})

describe('service keys', () => {
  it('a keys file from before the overlord key existed keeps its keys and gains the missing ones, once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devnet-keys-'))
    try {
      const path = join(dir, 'service-keys.json')
      const { overlord: _o, shadowJwtSecret: _s, ...old } = loadOrCreateServiceKeys(path)
      writeFileSync(path, JSON.stringify(old), { mode: 0o600 })
      const upgraded = loadOrCreateServiceKeys(path)
      expect(upgraded).toMatchObject(old)
      expect(upgraded.overlord.address).toBe(privateKeyToAccount(upgraded.overlord.privateKey).address)
      expect(upgraded.shadowJwtSecret).toMatch(/^[0-9a-f]{64}$/)
      expect(loadOrCreateServiceKeys(path)).toEqual(upgraded)
      expect(statSync(path).mode & 0o777).toBe(0o600)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
