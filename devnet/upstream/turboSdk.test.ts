/**
 * The Turbo SDK itself (`@ardrive/turbo-sdk`), unauthenticated and authenticated, against the devnet
 * upstream: every read the upstream's role implies (currencies, countries, rates, price of bytes, of fiat
 * and of tokens, balance, upload costs) and an upload, with the upstream's own pricing as the oracle.
 */
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArweaveSigner, TurboFactory, USD, JPY } from '@ardrive/turbo-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startArweaveGateway, type ArweaveGatewayPeer } from '../arweave/startArweaveGateway.js'
import { arweaveAddress, generateArweaveJwk, type ArweaveJwk } from '../testing/arweaveKey.js'
import { priceBytes, wincForUsdAtomic } from './pricing.js'
import { startUpstream, type UpstreamPeer } from './startUpstream.js'
import { wincForFiat } from './turboReads.js'

let dir: string
let up: UpstreamPeer
let gw: ArweaveGatewayPeer
let jwk: ArweaveJwk
const FUNDS = 10n ** 15n

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'turbo-sdk-'))
  jwk = await generateArweaveJwk()
  up = await startUpstream({ dataDir: dir, blockIntervalMs: 0, prefund: { [arweaveAddress(jwk)]: FUNDS } })
  gw = await startArweaveGateway({ dataDir: dir })
}, 60_000)
afterAll(async () => {
  await gw?.close()
  await up?.close()
  rmSync(dir, { recursive: true, force: true })
})

const config = () => ({ paymentServiceConfig: { url: up.url }, uploadServiceConfig: { url: up.url } })

describe('Turbo SDK, unauthenticated', () => {
  it('supported currencies and countries', async () => {
    const turbo = TurboFactory.unauthenticated(config())
    const currencies = await turbo.getSupportedCurrencies()
    expect(currencies.supportedCurrencies).toEqual(expect.arrayContaining(['usd', 'eur', 'jpy']))
    expect(currencies.limits.usd).toMatchObject({ minimumPaymentAmount: 500, maximumPaymentAmount: 1_000_000, zeroDecimalCurrency: false })
    expect(currencies.limits.jpy?.zeroDecimalCurrency).toBe(true)
    expect(await turbo.getSupportedCountries()).toContain('United States')
  })

  it('rates, and the AR price of a currency', async () => {
    const turbo = TurboFactory.unauthenticated(config())
    const rates = await turbo.getFiatRates()
    expect(rates.winc).toBe(up.pricing.wincPerGiB.toString())
    expect(rates.fiat.usd).toBe(up.pricing.fiat.usd)
    expect(await turbo.getFiatToAR({ currency: 'eur' })).toEqual({ currency: 'eur', rate: up.pricing.fiat.eur })
  })

  it('price of bytes (upload costs), of fiat and of tokens', async () => {
    const turbo = TurboFactory.unauthenticated(config())
    const costs = await turbo.getUploadCosts({ bytes: [1024, 1 << 20] })
    expect(costs.map((c) => c.winc)).toEqual([priceBytes(up.pricing, 1024n).toString(), priceBytes(up.pricing, 1n << 20n).toString()])

    const usd = await turbo.getWincForFiat({ amount: USD(10) })
    expect(usd.winc).toBe(wincForFiat(up.pricing, 'usd', 1000n).toString())
    expect(usd.winc).toBe(up.pricing.wincPerGiB.toString()) // $10 buys one GiB at $10/GiB
    expect(usd).toMatchObject({ actualPaymentAmount: 1000, quotedPaymentAmount: 1000, adjustments: [], fees: [] })
    const yen = await turbo.getWincForFiat({ amount: JPY(1480) })
    expect(yen.winc).toBe(up.pricing.wincPerGiB.toString())
    await expect(turbo.getWincForFiat({ amount: USD(1) })).rejects.toThrow(/400/) // below Turbo's $5 minimum

    const estimate = await turbo.getFiatEstimateForBytes({ byteCount: 1 << 30, currency: 'usd' })
    expect(estimate).toMatchObject({ amount: 10, currency: 'usd', winc: up.pricing.wincPerGiB.toString() })

    const ar = await turbo.getWincForToken({ tokenAmount: 1_000_000_000_000 })
    expect(ar.winc).toBe('1000000000000') // one winston buys one winc
    const usdcTurbo = TurboFactory.unauthenticated({ ...config(), token: 'base-usdc' })
    const usdc = await usdcTurbo.getWincForToken({ tokenAmount: 1_000_000 })
    expect(usdc.winc).toBe(wincForUsdAtomic(up.pricing, 1_000_000n).toString())
    const perBytes = await usdcTurbo.getTokenPriceForBytes({ byteCount: 1 << 30 })
    expect(Number(perBytes.tokenPrice)).toBe(10) // 10 USDC per GiB, as a top-up buys
  })

  it('balance of an address: funded, and zero for an unknown one', async () => {
    const turbo = TurboFactory.unauthenticated(config())
    expect((await turbo.getBalance(arweaveAddress(jwk))).winc).toBe(FUNDS.toString())
    expect((await turbo.getBalance('A'.repeat(43))).winc).toBe('0')
  })
})

describe('Turbo SDK, authenticated', () => {
  it('own balance, winc for fiat, and uploadFile charges the quoted cost', async () => {
    const turbo = TurboFactory.authenticated({ privateKey: jwk, ...config() })
    expect(await turbo.signer.getNativeAddress()).toBe(arweaveAddress(jwk))
    const before = BigInt((await turbo.getBalance()).winc)
    expect((await turbo.getWincForFiat({ amount: USD(20) })).winc).toBe((2n * up.pricing.wincPerGiB).toString())

    const file = join(dir, 'upload.bin')
    const data = Buffer.alloc(300_000, 9)
    writeFileSync(file, data)
    const result = await turbo.uploadFile({
      fileStreamFactory: () => createReadStream(file),
      fileSizeFactory: () => data.length,
      dataItemOpts: { tags: [{ name: 'Content-Type', value: 'application/octet-stream' }] },
    })
    expect(result.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(result.owner).toBe(arweaveAddress(jwk))
    const after = BigInt((await turbo.getBalance()).winc)
    expect(before - after).toBe(BigInt(result.winc))
    expect(BigInt(result.winc)).toBeGreaterThan(0n)
    const got = await fetch(`${gw.url}/${result.id}`)
    expect(Buffer.from(await got.arrayBuffer()).equals(data)).toBe(true)
  })

  it("upload of a small buffer is free (under the free limit)", async () => {
    const turbo = TurboFactory.authenticated({ signer: new ArweaveSigner(jwk), ...config() })
    const result = await turbo.upload({ data: 'hello from the Turbo SDK' })
    expect(result.winc).toBe('0')
    expect(await (await fetch(`${gw.url}/${result.id}`)).text()).toBe('hello from the Turbo SDK')
  })
})
