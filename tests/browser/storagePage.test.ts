/**
 * A paid upload from /storage/ in Chromium on the devnet, as a user makes it: sign in with a funded payer
 * wallet, choose a file, see the price, sign the x402 EIP-3009 authorization in the wallet
 * (`eth_signTypedData_v4`), upload with progress, read the receipt, and watch the upload in the wallet's
 * list until the gateway has verified it on the Arweave gateway. The USDC really moves on local Base.
 */
import type { Browser } from 'playwright-core'
import { createPublicClient, erc20Abi, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, launchBrowser, login, openPage, startSystem, type System, walletFromKey } from './support/index.js'

let system: System
let browser: Browser

beforeAll(async () => {
  system = await startSystem()
  browser = await launchBrowser()
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await system?.close()
})

describe('/storage/', () => {
  it('pays with the wallet, uploads with progress, shows the receipt and the upload turns verified', async () => {
    const payer = system.devnet.accounts.evm.find((a) => a.role === 'payer')!
    const base = system.devnet.chains['eip155:8453']
    const chain = createPublicClient({ transport: http(base.rpcUrl) })
    const balance = () => chain.readContract({ address: base.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [payer.address] })
    const before = await balance()

    const { page, walletLog } = await openPage(browser, { wallets: [walletFromKey(payer.privateKey)] })
    await login(page, '/storage/', { origin: system.url })
    await expect.poll(() => page.locator('#uploads-status').textContent(), { timeout: 30_000 }).toBe('No uploads yet.')

    // 300,000 bytes: the page writes sizes as people read them ("293 KiB", not "300000 B").
    const content = Buffer.concat([Buffer.from(`hello from the browser ${Date.now()}\n`), Buffer.alloc(300_000, 'a')]).subarray(0, 300_000)
    await page.locator('#file').setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: content })
    await expect.poll(() => page.locator('#price').textContent(), { timeout: 30_000 }).toMatch(/^Storing 293 KiB costs \$0\.\d{6}/)
    expect(await page.locator('#rail option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(['eip155:8453', 'eip155:1'])

    await page.locator('#pay').click()
    await page.locator('#receipt-details').waitFor({ timeout: 60_000 })
    expect(await page.locator('#status').textContent()).toBe('Stored and paid.')
    expect(await page.locator('#progress').evaluate((p) => (p as HTMLProgressElement).value)).toBe(100)
    const receipt = await page.locator('#receipt').textContent()
    expect(receipt).toMatch(/Arweave id[A-Za-z0-9_-]{43}/)
    expect(walletLog.map((l) => l.method)).toContain('eth_signTypedData_v4')

    const paid = before - (await balance())
    expect(paid > 0n).toBe(true)

    const row = page.locator('#uploads tbody tr').first()
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 90_000, interval: 1000 }).toBe('verified')
    expect(await row.textContent()).toContain('verified')
    expect(await row.locator('td').nth(1).textContent()).toBe('293 KiB')
    const arweaveLink = row.locator('td:last-child a')
    expect(await arweaveLink.getAttribute('href')).toMatch(new RegExp(`^${system.devnet.storage.gatewayUrl.replace(/\/+$/, '')}/[A-Za-z0-9_-]{43}$`))
    expect(await page.locator('#uploads-status').textContent()).toBe('1 upload.')
    await checkPage(page, 'storage')
  })
})
