/**
 * `/docs` (swagger-ui) has a Content-Security-Policy like every other page, and works under it: in a real
 * Chromium the page loads with no CSP violation (none reported to the page, no console error or failed request),
 * the operations of the gateway document render, and one of them opens with its parameters and responses.
 * (swagger-ui's own markup is not held to axe here: its widgets are not ours.)
 */
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, login, openPage, type Problem, SCREENSHOTS, startSystem, type System, waitForVisible, walletFromKey } from './support/index.js'

let system: System
let browser: Browser
let page: Page
let problems: () => Problem[]

beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
  ;({ page, problems } = await openPage(browser, { wallets: [walletFromKey(generatePrivateKey())] }))
  // every violation the page sees, from its first script on
  await page.addInitScript(() => {
    const seen: string[] = []
    ;(window as unknown as { cspViolations: string[] }).cspViolations = seen
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
  await login(page, '/journal', { origin: system.url })
}, 240_000)
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

describe('/docs under its Content-Security-Policy', () => {
  it('is served with the policy; swagger-ui renders the operations with no violation', async () => {
    const response = await page.goto(`${system.url}/docs`)
    const csp = response?.headers()['content-security-policy'] ?? ''
    expect(csp).toContain("default-src 'self'")
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/)
    expect(csp).not.toContain('unsafe-eval')
    expect(csp).toContain("frame-ancestors 'none'")

    // swagger-ui fetches and resolves the whole document in the page (seconds on a busy machine)
    await waitForVisible(page, '#swagger-ui .information-container', 60_000)
    await waitForVisible(page, '#swagger-ui .opblock >> nth=0', 60_000)
    expect(await page.locator('#swagger-ui .opblock').count()).toBeGreaterThan(50)
    // one operation opens: its description, parameters and responses render
    const store = page.locator('#swagger-ui .opblock-post').filter({ hasText: '/store' }).first()
    await store.locator('.opblock-summary').click()
    await waitForVisible(page, '#swagger-ui .opblock.is-open .responses-wrapper >> nth=0', 30_000)
    expect(await page.locator('#swagger-ui .opblock.is-open .response').count()).toBeGreaterThan(3)

    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([])
    // (Chromium also logs a refused script, style, image or request as a console error)
    expect(problems()).toEqual([])
    await page.screenshot({ path: `${SCREENSHOTS}/docs-csp.png` })
  }, 120_000)
})
