import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../config/ConfigError.js'
import { loadConfig } from '../config/loadConfig.js'
import { chainSignatureVerifier } from './chainSignatureVerifier.js'

/**
 * A login RPC decides every signature ECDSA does not. The attacker here runs an RPC (on
 * loopback) that says "valid" to every `eth_call`; only its chain id tells it apart from the login chain's.
 */
type Rpc = { url: string; calls: string[]; close(): Promise<void> }
const servers: Rpc[] = []

async function lyingRpc(chainId: number): Promise<Rpc> {
  const calls: string[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const request = JSON.parse(body) as { id: number; method: string }
      calls.push(request.method)
      const result = request.method === 'eth_chainId' ? `0x${chainId.toString(16)}` : `0x${'0'.repeat(63)}1`
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const rpc = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
  servers.push(rpc)
  return rpc
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const victim = privateKeyToAccount(generatePrivateKey()).address
const forged = `0x${'ab'.repeat(65)}` as const
const message = 'localhost wants you to sign in with your Ethereum account'

describe('login RPC pinned to SERVICE_LOGIN__CHAIN_ID', () => {
  it('an RPC of another chain decides nothing: a forged signature for any wallet is refused; the chain id is asked once', async () => {
    const rpc = await lyingRpc(1)
    const verify = chainSignatureVerifier(rpc.url, 8453)
    for (let i = 0; i < 3; i++) expect(await verify({ address: victim, message, signature: forged })).toBe(false)
    expect(rpc.calls.filter((m) => m === 'eth_chainId')).toHaveLength(1)
    expect(rpc.calls).not.toContain('eth_call')
  })

  it('on the login chain the RPC decides contract-wallet signatures (the trust documented), and EOAs never reach it', async () => {
    const rpc = await lyingRpc(8453)
    const verify = chainSignatureVerifier(rpc.url, 8453)
    expect(await verify({ address: victim, message, signature: forged })).toBe(true)
    const eoa = privateKeyToAccount(generatePrivateKey())
    const before = rpc.calls.length
    expect(await verify({ address: eoa.address, message, signature: await eoa.signMessage({ message }) })).toBe(true)
    expect(rpc.calls.length).toBe(before)
  })

  it('SERVICE_LOGIN__RPC_URL must be https unless loopback', () => {
    for (const url of ['http://rpc.example.com', 'http://10.0.0.5:8545', 'http://127.0.0.1.nip.io:8545']) {
      expect(() => loadConfig({ SERVICE_LOGIN__RPC_URL: url }), url).toThrow(ConfigError)
      expect(() => loadConfig({ SERVICE_LOGIN__RPC_URL: url })).toThrow(/must be https unless it is on this machine/)
    }
    for (const url of ['https://mainnet.base.org', 'http://127.0.0.1:8545', 'http://localhost:8545', 'http://[::1]:8545']) {
      expect(loadConfig({ SERVICE_LOGIN__RPC_URL: url }).login.rpcUrl, url).toBe(url)
    }
  })
})
