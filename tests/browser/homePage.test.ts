/**
 * The home page a newcomer opens first, signed out, in Chromium at desktop and phone width: it says what pay2store
 * is and lists what each page does, marking the pages that need a wallet sign-in; a page marked so leads to the
 * sign-in and back, an open one opens. No console error, failed request or serious axe violation.
 */
import type { Browser } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, launchBrowser, login, openPage, startSystem, type System, walletFromKey } from './support/index.js'

let system: System
let browser: Browser

beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
}, 240_000)
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

describe('the signed-out home page', () => {
  for (const width of [1280, 390]) {
    it(`${width} px: says what the product is and what each page does, marking those that need a wallet`, async () => {
      const { page } = await openPage(browser, { viewport: { width, height: width > 600 ? 900 : 844 } })
      await page.goto(`${system.url}/`)
      expect(await page.locator('h1').textContent()).toBe('pay2store')
      const lead = page.locator('p.lead')
      expect(await lead.isVisible()).toBe(true)
      expect(await lead.textContent()).toMatch(/^Store files permanently, paid from your wallet\..*Arweave/)
      await expect.poll(() => page.locator('#login-view').isVisible()).toBe(true)
      const items = page.locator('#site-pages li')
      expect(await items.count()).toBeGreaterThanOrEqual(10)
      for (const item of await items.all()) {
        expect(await item.isVisible()).toBe(true)
        const needs = await item.getAttribute('data-needs')
        expect(await item.locator('.needs').textContent()).toBe(needs === 'wallet' ? 'wallet sign-in' : 'open to everyone')
        expect(((await item.locator('p').textContent()) ?? '').length).toBeGreaterThan(20)
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
      await checkPage(page, `home-signed-out-${width}`)
    })
  }

  it('a page marked "wallet sign-in" leads to the sign-in and back; the API documents open without one', async () => {
    const wallet = walletFromKey(generatePrivateKey())
    const { page } = await openPage(browser, { wallets: [wallet] })
    await page.goto(`${system.url}/`)
    await page.locator('#site-pages li[data-path="/docs.html"] a').click()
    await page.waitForURL((u) => u.pathname === '/docs.html')
    expect(await page.locator('a[href="/doc/openapi/gateway.yaml"]').isVisible()).toBe(true)
    await page.goto(`${system.url}/`)
    await page.locator('#site-pages li[data-path="/storage/"] a').click()
    await page.waitForURL((u) => u.pathname === '/login')
    expect(new URL(page.url()).searchParams.get('from')).toBe('/storage/')
    await login(page, '/storage/')
    expect(new URL(page.url()).pathname).toBe('/storage/')
    await page.goto(`${system.url}/`)
    await expect.poll(() => page.locator('#welcome-view').isVisible()).toBe(true)
    expect(await page.locator('#wallet').textContent()).toBe(wallet.address)
    await checkPage(page, 'home-signed-in')
  })
})
