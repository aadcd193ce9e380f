/**
 * Signing in as a user does, in Chromium with a browser wallet: the round trip from every gated page and every
 * HTML route of the tier matrix (seed 000 §4.2), the shared navigation (wallet shown, "Login" hidden, logout),
 * `/public`'s two views, a phone-width keyboard-only sign-in, the EIP-6963 wallet choice, and smart-contract
 * wallets (EIP-1271 deployed, EIP-6492 not yet deployed) verified through the devnet's local Base.
 */
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, deploySmartWalletFactory, launchBrowser, login, openPage, startSystem, walletFromKey, type SmartWalletFactory, type System } from './support/index.js'

let system: System
let browser: Browser
let factory: SmartWalletFactory
beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
  const payers = system.devnet.accounts.evm.filter((a) => a.role === 'payer')
  factory = await deploySmartWalletFactory(system.devnet.chains['eip155:8453'].rpcUrl, payers[payers.length - 1]!.privateKey)
})
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

/** The navigation as the user sees it. */
async function nav(page: Page) {
  await page.locator('#nav-wallet:not([hidden]), #nav-login:not([hidden])').first().waitFor()
  return {
    wallet: (await page.locator('#nav-wallet').isVisible()) ? await page.locator('#nav-wallet-address').getAttribute('data-wallet') : null,
    login: await page.locator('#nav-login').isVisible(),
    logout: await page.locator('#nav-logout').isVisible(),
  }
}

/**
 * Waits until the navigation shows `expected`. A page the server rendered signed out (the public ones) shows
 * "Login" until its script's `/users/session/validate` answers, and `nav` reads the three elements one by one, so
 * a single read can fall between the two states (seen in CI: Login and Log out both visible, no wallet).
 */
const expectNav = (page: Page, expected: Awaited<ReturnType<typeof nav>>) => expect.poll(() => nav(page), { timeout: 15_000 }).toEqual(expected)

const slug = (path: string) => path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'root'

// Seed 000 §4.2: the session rows with an HTML page (feedback.txt is text; /mindterm/ is now /coreterm/).
const GATED_PAGES = ['/feedback.html', '/journal', '/dojo', '/boardroom', '/book', '/coreterm/', '/insight/', '/registry/', '/storage/']
const PUBLIC_PAGES = ['/public', '/login', '/docs.html', '/doc/', '/autocore']

describe('login round trip', () => {
  it.each(GATED_PAGES)('%s → /login?from=… → sign → back, signed in', async (path) => {
    const wallet = walletFromKey(generatePrivateKey())
    const { page, walletLog } = await openPage(browser, { wallets: [wallet] })
    await page.goto(`${system.url}${path}`)
    expect(new URL(page.url()).pathname).toBe('/login')
    await checkPage(page, `login-from-${slug(path)}`)
    await login(page, path)
    expect(new URL(page.url()).pathname).toBe(path)
    await expectNav(page, { wallet: wallet.address, login: false, logout: true })
    expect(walletLog.map((l) => l.method)).toEqual(['eth_requestAccounts', 'personal_sign'])
    await checkPage(page, `page-${slug(path)}`)
  })

  it('feedback.txt (a gated text route) opens after signing in on another page', async () => {
    const { page } = await openPage(browser, { wallets: [walletFromKey(generatePrivateKey())] })
    await page.goto(`${system.url}/feedback.txt`)
    expect(new URL(page.url()).pathname).toBe('/login')
    expect(new URL(page.url()).searchParams.get('from')).toBe('/feedback.txt')
    await login(page, '/journal')
    const response = await page.goto(`${system.url}/feedback.txt`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()['content-type']).toMatch(/^text\/plain/)
  })

  it.each(PUBLIC_PAGES)('public %s opens without a session, shows "Login", then the wallet once signed in', async (path) => {
    const wallet = walletFromKey(generatePrivateKey())
    const { page } = await openPage(browser, { wallets: [wallet] })
    await page.goto(`${system.url}${path}`)
    expect(new URL(page.url()).pathname).toBe(path)
    await expectNav(page, { wallet: null, login: true, logout: false })
    await checkPage(page, `public-${slug(path)}`)
    if (path === '/login') return
    await page.locator('#nav-login').click()
    await page.waitForURL((u) => u.pathname === '/login')
    expect(new URL(page.url()).searchParams.get('from')).toBe(path)
    await page.locator('#signin').click()
    await page.waitForURL((u) => u.pathname === path)
    await expectNav(page, { wallet: wallet.address, login: false, logout: true })
    await checkPage(page, `public-${slug(path)}-signed-in`)
  })
})

describe('/public and logout', () => {
  it('shows the login view without a token and the signed-in home with one; logout revokes the session', async () => {
    const wallet = walletFromKey(generatePrivateKey())
    const { page } = await openPage(browser, { wallets: [wallet] })
    await page.goto(`${system.url}/public`)
    await expect.poll(() => page.locator('#login-view').isVisible()).toBe(true)
    expect(await page.locator('#welcome-view').isVisible()).toBe(false)
    await page.locator('#public-signin').click()
    await page.waitForURL((u) => u.pathname === '/login')
    await page.locator('#signin').click()
    await page.waitForURL((u) => u.pathname === '/public')
    await expect.poll(() => page.locator('#welcome-view').isVisible()).toBe(true)
    expect(await page.locator('#login-view').isVisible()).toBe(false)
    expect(await page.locator('#wallet').textContent()).toBe(wallet.address)
    await checkPage(page, 'public-home')
    const token = await page.evaluate(() => localStorage.getItem('session_token'))
    expect(token).toBeTruthy()

    // the page checks its token as it loads; that check is answered before the logout, or it could reach the
    // server after it and be a 401 (what a revoked token gets) on a loaded machine
    const checked = page.waitForResponse((r) => new URL(r.url()).pathname === '/users/session/validate')
    await page.goto(`${system.url}/journal`)
    expect((await checked).status()).toBe(200)
    await page.locator('#nav-logout').click()
    await page.waitForURL((u) => u.pathname === '/public')
    await expect.poll(() => page.locator('#login-view').isVisible()).toBe(true)
    await expectNav(page, { wallet: null, login: true, logout: false })
    expect(await page.evaluate(() => localStorage.getItem('session_token'))).toBeNull()
    await checkPage(page, 'public-after-logout')
    // The session is revoked server-side and the cookie is gone: the gated page sends the browser to login.
    const validate = await fetch(`${system.url}/users/session/validate`, { headers: { 'X-Session-Token': token! } })
    expect(validate.status).toBe(401)
    await page.goto(`${system.url}/journal`)
    expect(new URL(page.url()).pathname).toBe('/login')
  })

  it('works at phone width with the keyboard only', async () => {
    const wallet = walletFromKey(generatePrivateKey())
    const { page } = await openPage(browser, { wallets: [wallet], viewport: { width: 390, height: 844 } })
    await page.goto(`${system.url}/dojo`)
    // No horizontal scrolling at 390 px.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await page.locator('#signin').focus()
    await page.keyboard.press('Enter')
    await page.waitForURL((u) => u.pathname === '/dojo')
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await expectNav(page, { wallet: wallet.address, login: false, logout: true })
    // Tab reaches "Log out" and Enter logs out.
    for (let i = 0; i < 30 && !(await page.evaluate(() => document.activeElement?.id === 'nav-logout')); i++) await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('nav-logout')
    await checkPage(page, 'phone-dojo')
    await page.keyboard.press('Enter')
    await page.waitForURL((u) => u.pathname === '/public')
    await checkPage(page, 'phone-public')
  })
})

describe('wallet choice and smart-contract wallets', () => {
  it('lists the injected wallets (EIP-6963) and signs in with the one chosen', async () => {
    const first = walletFromKey(generatePrivateKey(), { name: 'Alpha Wallet', rdns: 'org.example.alpha' })
    const second = walletFromKey(generatePrivateKey(), { name: 'Beta Wallet', rdns: 'org.example.beta' })
    const { page, walletLog } = await openPage(browser, { wallets: [first, second] })
    await page.goto(`${system.url}/login?from=%2Fregistry%2F`)
    await expect.poll(() => page.locator('#wallets label').allTextContents()).toEqual(['Alpha Wallet', 'Beta Wallet'])
    await checkPage(page, 'login-wallet-choice')
    await page.getByLabel('Beta Wallet', { exact: true }).check()
    await page.locator('#signin').click()
    await page.waitForURL((u) => u.pathname === '/registry/')
    await expectNav(page, { wallet: second.address, login: false, logout: true })
    expect(new Set(walletLog.map((l) => l.provider))).toEqual(new Set([1]))
  })

  it('a deployed EIP-1271 contract wallet signs in (verified through the chain)', async () => {
    const wallet = await factory.deployed(generatePrivateKey())
    expect(await factory.hasCode(wallet.address)).toBe(true)
    const { page } = await openPage(browser, { wallets: [wallet] })
    await login(page, `${system.url}/journal`)
    await expectNav(page, { wallet: wallet.address, login: false, logout: true })
    await checkPage(page, 'login-eip1271')
  })

  it('a not-yet-deployed EIP-6492 wallet signs in, and nothing is deployed by it', async () => {
    const wallet = await factory.counterfactual(generatePrivateKey())
    expect(await factory.hasCode(wallet.address)).toBe(false)
    const { page } = await openPage(browser, { wallets: [wallet] })
    await login(page, `${system.url}/storage/`)
    await expectNav(page, { wallet: wallet.address, login: false, logout: true })
    expect(await factory.hasCode(wallet.address)).toBe(false)
    await checkPage(page, 'login-eip6492')
  })

  it('a contract wallet whose owner did not sign is refused', async () => {
    const real = await factory.deployed(generatePrivateKey(), 'refused')
    const impostor = walletFromKey(generatePrivateKey())
    const { page } = await openPage(browser, { wallets: [{ ...real, signMessage: impostor.signMessage }] })
    await page.goto(`${system.url}/login?from=%2Fjournal`)
    await page.locator('#signin').click()
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/Sign-in failed/)
    expect(new URL(page.url()).pathname).toBe('/login')
    await checkPage(page, 'login-refused', { allow: (p) => /register-with-signature|status of 40[01]/.test(p.text) })
  })
})
