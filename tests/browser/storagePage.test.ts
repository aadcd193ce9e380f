/**
 * A paid upload from /storage/ in Chromium on the devnet, as a user makes it: sign in with a funded payer
 * wallet, choose a file, see the price, sign the x402 EIP-3009 authorization in the wallet
 * (`eth_signTypedData_v4`), upload with progress, read the receipt, and watch the upload in the wallet's
 * list until the gateway has verified it on the Arweave gateway. The USDC really moves on local Base. The same on
 * a phone (390 px), where each upload of the list is a card with every column on the screen.
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

  it('at 390 px (a phone) the uploads table shows every column of an upload on the screen, each labelled, nothing off to the side', async () => {
    const payer = system.devnet.accounts.evm.filter((a) => a.role === 'payer')[1]! // not the first test's: its own list
    const { page } = await openPage(browser, { wallets: [walletFromKey(payer.privateKey)], viewport: { width: 390, height: 844 } })
    await login(page, '/storage/', { origin: system.url })
    await expect.poll(() => page.locator('#uploads-status').textContent(), { timeout: 30_000 }).toBe('No uploads yet.')
    await page.locator('#file').setInputFiles({ name: 'phone.txt', mimeType: 'text/plain', buffer: Buffer.from(`from a phone ${Date.now()}\n`) })
    await expect.poll(() => page.locator('#price').textContent(), { timeout: 30_000 }).toMatch(/^Storing \d+ B costs/)
    await page.locator('#pay').click()
    await page.locator('#receipt-details').waitFor({ timeout: 60_000 })
    const row = page.locator('#uploads tbody tr').first()
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 90_000, interval: 1000 }).toBe('verified')

    const headers = await page.locator('#uploads thead th').allTextContents()
    expect(headers).toEqual(['When', 'Size', 'Paid', 'Status', 'Verification', 'Receipt', 'Arweave'])
    const width = await page.evaluate(() => document.documentElement.clientWidth)
    const cells = await row.locator('td').evaluateAll((tds) =>
      tds.map((td) => {
        const box = td.getBoundingClientRect()
        return { left: box.left, right: box.right, height: box.height, label: getComputedStyle(td, '::before').content, text: (td.textContent ?? '').trim() }
      }),
    )
    expect(cells).toHaveLength(headers.length)
    cells.forEach((cell, i) => {
      // on the screen, without scrolling sideways: inside the viewport, not hidden, with its column's name beside it
      expect(cell.left, headers[i]).toBeGreaterThanOrEqual(0)
      expect(cell.right, headers[i]).toBeLessThanOrEqual(width)
      expect(cell.height, headers[i]).toBeGreaterThan(0)
      expect(cell.label, headers[i]).toBe(JSON.stringify(headers[i]))
      expect(cell.text, headers[i]).not.toBe('')
    })
    // the links of the last columns work from here
    expect(await row.locator('td[data-label="Receipt"] a').getAttribute('href')).toMatch(/^\/store\/receipts\/[A-Za-z0-9_-]{43}$/)
    expect(await row.locator('td[data-label="Arweave"] a').isVisible()).toBe(true)
    // nothing of the list hides in a box that scrolls sideways, and the page does not scroll sideways either
    expect(await page.locator('#uploads').evaluate((t) => t.closest('.wrap')!.scrollWidth <= t.closest('.wrap')!.clientWidth)).toBe(true)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
    await checkPage(page, 'storage-uploads-390')
  })
})
