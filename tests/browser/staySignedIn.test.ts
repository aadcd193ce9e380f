/**
 * A user moving between the pages stays signed in. The navigation script asks
 * `/users/session/validate` on every page; only the server's 401 ("this token is not a session") may forget the
 * stored token. A request cut off because the user clicked on, a network error or a 5xx keeps it — otherwise the
 * navigation shows "Login" while the cookie is still valid and /dojo's Send fails with auth_required.
 */
import type { Browser, Page, Response, Route } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, login, openPage, startSystem, walletFromKey, type System, type TestWallet } from './support/index.js'

let system: System
let browser: Browser

beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
}, 240_000)
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

// Every page the navigation links to, in its order, and back to the start.
const PAGES = ['/public', '/storage/', '/insight/', '/registry/', '/dojo', '/boardroom', '/journal', '/coreterm/', '/book', '/docs', '/feedback.html', '/public']
const VALIDATE = '**/users/session/validate'

/** A response to the navigation's session check. */
const isValidate = (r: Response) => r.url().endsWith('/users/session/validate')

const storedToken = (page: Page) => page.evaluate(() => localStorage.getItem('session_token'))

/** Signed in and on /journal; returns the token the login page stored. */
async function signedInPage(wallet: TestWallet = walletFromKey(generatePrivateKey())) {
  const tab = await openPage(browser, { wallets: [wallet] })
  // /journal's own validate must have answered before a test moves on: one still in flight when a test logs the
  // session out elsewhere comes back 401 and forgets the token before the test's next page (seen in CI under load).
  const journalValidated = tab.page.waitForResponse((r) => isValidate(r) && new URL(r.frame().url()).pathname === '/journal', { timeout: 60_000 })
  await login(tab.page, `${system.url}/journal`)
  expect((await journalValidated).status()).toBe(200)
  const token = await storedToken(tab.page)
  expect(token).toMatch(/\S/)
  return { ...tab, wallet, token: token! }
}

/** The navigation after its validate call answered: the wallet it shows, or null when it shows "Login". */
async function navWallet(page: Page): Promise<string | null> {
  await page.locator('#nav-wallet:not([hidden]), #nav-login:not([hidden])').first().waitFor()
  return (await page.locator('#nav-wallet').isVisible()) ? page.locator('#nav-wallet-address').getAttribute('data-wallet') : null
}

/** Opens /public and waits for its validate answer: the signed-in home shows the wallet. */
async function homeShows(page: Page, wallet: string) {
  const validated = page.waitForResponse(isValidate)
  await page.goto(`${system.url}/public`)
  expect((await validated).status()).toBe(200)
  await page.locator('#welcome-view').waitFor()
  expect(await page.locator('#wallet').textContent()).toBe(wallet)
  expect(await navWallet(page)).toBe(wallet)
}

describe('the navigation keeps the session while the user moves between pages', () => {
  it('clicking slowly through every page (each validate answered) stays signed in on each', async () => {
    const { page, wallet, token } = await signedInPage()
    for (const path of PAGES) {
      const validated = page.waitForResponse(isValidate)
      await page.goto(`${system.url}${path}`)
      expect(new URL(page.url()).pathname, `${path} did not open (signed out?)`).toBe(path)
      expect((await validated).status()).toBe(200)
      expect(await navWallet(page), `navigation on ${path}`).toBe(wallet.address)
      expect(await storedToken(page)).toBe(token)
    }
  })

  it('clicking quickly through every page (leaving before validate answers) stays signed in', async () => {
    const { page, wallet, token } = await signedInPage()
    // Each validate is held until the user has already clicked on: the browser cancels it as the page goes.
    let held = 0
    await page.route(VALIDATE, async (route: Route) => {
      held++
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      await route.continue().catch(() => undefined)
    })
    await page.goto(`${system.url}${PAGES[0]}`, { waitUntil: 'domcontentloaded' })
    for (const path of PAGES.slice(1)) {
      await page.locator(`.site-nav a[href="${path}"]`).click()
      await page.waitForURL((u) => u.pathname === path, { waitUntil: 'domcontentloaded' })
    }
    expect(await storedToken(page), 'the stored session token after the clicks').toBe(token)
    // Every page asked (a page without a token asks nothing), and each was left before its answer.
    expect(held).toBeGreaterThanOrEqual(PAGES.length - 1)
    await page.unroute(VALIDATE)
    await homeShows(page, wallet.address)
  })

  it('a network error or a 5xx from validate keeps the token (the session is not known to be over)', async () => {
    const { page, wallet, token } = await signedInPage()
    const answers: [string, (route: Route) => Promise<void>][] = [
      ['network error', (route) => route.abort('failed')],
      ['connection reset', (route) => route.abort('connectionreset')],
      ['500', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'internal_error', message: 'Internal error.' }) })],
      ['503', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'unavailable', message: 'Try again.' }) })],
    ]
    for (const [name, answer] of answers) {
      let answered = 0
      await page.route(VALIDATE, async (route) => {
        await answer(route)
        answered++
      })
      await page.goto(`${system.url}/public`)
      await expect.poll(() => answered, { timeout: 30_000 }).toBe(1)
      // The navigation script has run its catch by the time the page is idle.
      await page.waitForLoadState('networkidle')
      expect(await storedToken(page), `after a ${name}`).toBe(token)
      // The home page says the session could not be checked (not "Sign in").
      expect(await page.locator('#session-unknown').isVisible(), `after a ${name}`).toBe(true)
      expect(await page.locator('#login-view').isVisible(), `after a ${name}`).toBe(false)
      await page.unroute(VALIDATE)
    }
    await homeShows(page, wallet.address)
  })

  it('a 401 from validate (the session was logged out elsewhere) forgets the token and shows "Login"', async () => {
    const { page, token } = await signedInPage()
    // Logged out from another tab or device: the server no longer knows the token.
    const out = await fetch(`${system.url}/users/logout`, { method: 'POST', headers: { 'X-Session-Token': token } })
    expect(out.status).toBeLessThan(300)
    const validated = page.waitForResponse(isValidate)
    await page.goto(`${system.url}/public`)
    expect((await validated).status()).toBe(401)
    await page.locator('#login-view').waitFor()
    expect(await navWallet(page)).toBeNull()
    expect(await storedToken(page)).toBeNull()
  })
})
