/** The devnet USDC behaves like FiatTokenV2 on the paths x402 uses: EIP-3009 with FiatTokenV2's revert reasons. */
import { randomBytes } from 'node:crypto'
import { createPublicClient, createWalletClient, http, parseSignature, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../accounts.js'
import { getDefaultAsset } from '@x402/evm'
import { canonicalUsdc, startChain, usdcArtifact, type LocalChain } from './startChain.js'

const types = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
  ],
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
  ],
  CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }],
} as const

describe('UsdcToken (FiatTokenV2-like)', () => {
  let chain: LocalChain
  const abi = usdcArtifact().abi
  const payer = privateKeyToAccount(anvilAccount(2).privateKey)
  const relayer = privateKeyToAccount(anvilAccount(1).privateKey)
  const payee = privateKeyToAccount(anvilAccount(6).privateKey)
  beforeAll(async () => {
    chain = await startChain({ chainId: 1 })
  })
  afterAll(async () => chain?.close())

  const pub = () => createPublicClient({ chain: chain.chain, transport: http(chain.url) })
  const domain = () => ({ name: 'USD Coin', version: '2', chainId: 1, verifyingContract: chain.tokenAddress })
  const nonce = () => `0x${randomBytes(32).toString('hex')}` as Hex
  const now = () => BigInt(Math.floor(Date.now() / 1000))

  async function sign(primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization', m: { to: `0x${string}`; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex }, signer = payer) {
    return signer.signTypedData({ domain: domain(), types, primaryType, message: { from: payer.address, ...m } })
  }
  async function call(fn: string, args: unknown[], account = relayer) {
    return pub().simulateContract({ address: chain.tokenAddress, abi, functionName: fn, args, account })
  }
  async function send(fn: string, args: unknown[], account = relayer) {
    const w = createWalletClient({ chain: chain.chain, transport: http(chain.url), account })
    const hash = await w.writeContract({ address: chain.tokenAddress, abi, functionName: fn, args })
    return pub().waitForTransactionReceipt({ hash })
  }

  it('has USDC metadata and the EIP-712 domain USD Coin / 2', async () => {
    const read = (fn: string, args: unknown[] = []) => pub().readContract({ address: chain.tokenAddress, abi, functionName: fn, args })
    expect(await read('decimals')).toBe(6)
    expect(await read('name')).toBe('USD Coin')
    expect(await read('version')).toBe('2')
    const d = (await read('eip712Domain')) as unknown[]
    expect(d.slice(1, 5)).toEqual(['USD Coin', '2', 1n, chain.tokenAddress])
    expect(await read('owner')).toBe(anvilAccount(0).address)
    expect(await read('balanceOf', [payer.address])).toBe(1_000_000n * 10n ** 6n)
  })

  it("sits at Ethereum's USDC address with the EIP-712 name/version stock x402 clients sign for", async () => {
    const real = getDefaultAsset('eip155:1', 'USDC')
    expect(chain.tokenAddress).toBe('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')
    expect(chain.tokenAddress.toLowerCase()).toBe(real.asset.toLowerCase())
    const d = (await pub().readContract({ address: chain.tokenAddress, abi, functionName: 'eip712Domain' })) as unknown[]
    expect(d.slice(1, 3)).toEqual([real.name, real.version])
    expect(canonicalUsdc(8453)?.address).toBe('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')
    expect(canonicalUsdc(31337)).toBeUndefined()
  })

  it('transferWithAuthorization (v,r,s and bytes) with FiatTokenV2 revert reasons', async () => {
    const m = { to: payee.address, value: 1_000n, validAfter: 0n, validBefore: now() + 3600n, nonce: nonce() }
    const sig = await sign('TransferWithAuthorization', m)
    const { v, r, s } = parseSignature(sig)
    const args = [payer.address, m.to, m.value, m.validAfter, m.validBefore, m.nonce]
    await expect(call('transferWithAuthorization', [payer.address, m.to, m.value + 1n, m.validAfter, m.validBefore, m.nonce, sig])).rejects.toThrow('FiatTokenV2: invalid signature')
    expect((await send('transferWithAuthorization', [...args, Number(v), r, s])).status).toBe('success')
    expect(await pub().readContract({ address: chain.tokenAddress, abi, functionName: 'authorizationState', args: [payer.address, m.nonce] })).toBe(true)
    await expect(call('transferWithAuthorization', [...args, sig])).rejects.toThrow('FiatTokenV2: authorization is used or canceled')

    const future = { ...m, validAfter: now() + 3600n, validBefore: now() + 7200n, nonce: nonce() }
    await expect(call('transferWithAuthorization', [payer.address, future.to, future.value, future.validAfter, future.validBefore, future.nonce, await sign('TransferWithAuthorization', future)])).rejects.toThrow('FiatTokenV2: authorization is not yet valid')
    const past = { ...m, validBefore: now() - 10n, nonce: nonce() }
    await expect(call('transferWithAuthorization', [payer.address, past.to, past.value, past.validAfter, past.validBefore, past.nonce, await sign('TransferWithAuthorization', past)])).rejects.toThrow('FiatTokenV2: authorization is expired')
    const big = { ...m, value: 10n ** 30n, nonce: nonce() }
    await expect(call('transferWithAuthorization', [payer.address, big.to, big.value, big.validAfter, big.validBefore, big.nonce, await sign('TransferWithAuthorization', big)])).rejects.toThrow('ERC20: transfer amount exceeds balance')
  })

  it('receiveWithAuthorization requires the payee as caller; cancelAuthorization burns a nonce', async () => {
    const m = { to: payee.address, value: 5n, validAfter: 0n, validBefore: now() + 3600n, nonce: nonce() }
    const sig = await sign('ReceiveWithAuthorization', m)
    const args = [payer.address, m.to, m.value, m.validAfter, m.validBefore, m.nonce, sig]
    await expect(call('receiveWithAuthorization', args, relayer)).rejects.toThrow('FiatTokenV2: caller must be the payee')
    expect((await send('receiveWithAuthorization', args, payee)).status).toBe('success')

    const n = nonce()
    const cancel = await payer.signTypedData({ domain: domain(), types, primaryType: 'CancelAuthorization', message: { authorizer: payer.address, nonce: n } })
    await expect(call('cancelAuthorization', [payer.address, nonce(), cancel])).rejects.toThrow('FiatTokenV2: invalid signature')
    expect((await send('cancelAuthorization', [payer.address, n, cancel])).status).toBe('success')
    const t = { to: payee.address, value: 1n, validAfter: 0n, validBefore: now() + 3600n, nonce: n }
    await expect(call('transferWithAuthorization', [payer.address, t.to, t.value, t.validAfter, t.validBefore, t.nonce, await sign('TransferWithAuthorization', t)])).rejects.toThrow('FiatTokenV2: authorization is used or canceled')
  })

  it('only the owner mints', async () => {
    await expect(call('mint', [payee.address, 1n], payee)).rejects.toThrow('Ownable: caller is not the owner')
  })
})
