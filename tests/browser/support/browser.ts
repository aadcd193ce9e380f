import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import AxeBuilder from '@axe-core/playwright'
import { chromium, type Browser, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { injectWallets, type TestWallet, type WalletLog } from './wallet.js'

/**
 * Debian's Chromium. Its old headless shell (package `chromium-headless-shell`, what Playwright itself runs for
 * headless tests) when installed: the same Blink and V8 without the browser's UI layer, ~25% less CPU for the same
 * files (docs/testing.md); else the full browser. CHROMIUM_PATH overrides both.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell'
export const CHROMIUM = process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium')
export const SCREENSHOTS = resolve(import.meta.dirname, '../../../.tmp/screenshots')

/** Headless Chromium. Fails with a clear message when it is not installed (CI installs it). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium chromium-headless-shell (or set CHROMIUM_PATH)`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
}

/**
 * One thing that went wrong in a page: a console error, an uncaught exception, a failed or ≥400 request, or a
 * request the document does not allow (a body-less request declaring a JSON content type).
 */
export type Problem = { kind: 'console' | 'pageerror' | 'requestfailed' | 'http' | 'request'; text: string; url?: string; status?: number }

const problemsOf = new WeakMap<Page, Problem[]>()

export type OpenPage = {
  page: Page
  /** Every wallet request the page made. */
  walletLog: WalletLog
  /** Problems recorded since the page opened or since the last `checkPage`. */
  problems: () => Problem[]
}

export type OpenPageParameters = {
  /** Injected wallets (first is `window.ethereum`; all announced via EIP-6963). None: no wallet at all. */
  wallets?: TestWallet[]
  chainId?: number
  /** Viewport; default 1280×900. Use {width: 390, height: 844} for phone width. */
  viewport?: { width: number; height: number }
}

/**
 * A fresh context (own cookies and localStorage) and page, with the wallets injected and problems recorded:
 * console errors, uncaught exceptions, requests that failed at the network level, responses ≥ 400, body-less
 * requests with a JSON content type (the systems validate responses in `error` mode, so a response that breaks
 * the document is a 500, and a request that breaks it is the document's 400).
 * Navigation aborts caused by the page leaving (`net::ERR_ABORTED` after a `location.assign`) are not problems.
 */
export async function openPage(browser: Browser, p: OpenPageParameters = {}): Promise<OpenPage> {
  const context = await browser.newContext({ viewport: p.viewport ?? { width: 1280, height: 900 } })
  const page = await context.newPage()
  const problems: Problem[] = []
  problemsOf.set(page, problems)
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push({ kind: 'console', text: m.text(), url: m.location().url })
  })
  page.on('pageerror', (e) => problems.push({ kind: 'pageerror', text: e.message }))
  page.on('requestfailed', (r) => {
    const failure = r.failure()?.errorText ?? 'failed'
    if (failure === 'net::ERR_ABORTED') return
    problems.push({ kind: 'requestfailed', text: `${r.method()} ${r.url()}: ${failure}`, url: r.url() })
  })
  // The document's rule for body-less requests: no JSON content type (an empty "JSON" body is a 400).
  page.on('request', (r) => {
    const type = r.headers()['content-type']
    if (r.postData() === null && type && /json/i.test(type)) problems.push({ kind: 'request', text: `${r.method()} ${r.url()} sends content-type ${type} without a body`, url: r.url() })
  })
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push({ kind: 'http', text: `${r.request().method()} ${r.url()} → ${r.status()}`, url: r.url(), status: r.status() })
  })
  const walletLog = p.wallets?.length ? await injectWallets(page, p.wallets, { chainId: p.chainId }) : []
  return { page, walletLog, problems: () => [...problems] }
}

export type CheckPageOptions = {
  /** Problems the test expects (e.g. a documented 4xx it provoked); everything else fails the check. */
  allow?: (problem: Problem) => boolean
}

/**
 * The page as it is now: no console error, no uncaught exception, no failed request (since the page opened
 * or the previous check), no serious or critical axe-core violation, and a full-page screenshot written to
 * `.tmp/screenshots/<name>.png`. Resets the recorded problems.
 */
export async function checkPage(page: Page, name: string, options: CheckPageOptions = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  const problems = problemsOf.get(page) ?? []
  const unexpected = problems.filter((p) => !options.allow?.(p))
  problems.length = 0
  if (unexpected.length) throw new Error(`${name}: ${unexpected.length} console error(s) / failed request(s):\n${unexpected.map((p) => `  ${p.kind}: ${p.text}${p.url ? ` (${p.url})` : ''}`).join('\n')}`)
  // Legacy mode: one axe.run in the page (same-origin frames included) instead of a run per frame finished in a
  // blank page of its own — ~1.0 s a check instead of ~1.5 s; our pages embed no cross-origin frame.
  const axe = await new AxeBuilder({ page }).setLegacyMode(true).analyze()
  const bad = axe.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }))
  if (bad.length) throw new Error(`${name}: serious/critical accessibility violations:\n${JSON.stringify(bad, null, 2)}`)
}

/**
 * Waits until `selector` is visible in `page`; when it is not within `timeout`, fails with what the page showed
 * instead — its address (a redirect to /login shows here), the start of its text and the problems recorded since the
 * last `checkPage` — so that a CI log says why (a bare locator time-out says only "waiting for …").
 */
export async function waitForVisible(page: Page, selector: string, timeout: number): Promise<void> {
  const t0 = Date.now()
  try {
    await page.locator(selector).waitFor({ state: 'visible', timeout })
  } catch (error) {
    const text = await page.evaluate(() => document.body?.innerText ?? '').catch((e: unknown) => `(unreadable: ${String(e)})`)
    const problems = problemsOf.get(page) ?? []
    throw new Error(
      `${selector} not visible after ${Date.now() - t0} ms on ${page.url()}\n  page text: ${JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 400))}\n` +
        `  problems: ${problems.length ? problems.map((p) => `${p.kind}: ${p.text}`).join('; ') : 'none'}`,
      { cause: error },
    )
  }
}

/**
 * The login round trip as a user makes it: open `from`; when the gate sends the browser to
 * `/login?from=…`, choose the wallet (by its EIP-6963 name, if given and the page lists several), press
 * "Connect wallet and sign in", sign, and wait until the browser is back on `from`. When `from` opens directly
 * (already signed in, or a public page), nothing else happens.
 */
export async function login(page: Page, from: string, options: { origin?: string; wallet?: string } = {}): Promise<void> {
  const target = /^https?:\/\//.test(from) ? new URL(from) : new URL(from, options.origin ?? new URL(page.url()).origin)
  await page.goto(target.href)
  const here = new URL(page.url())
  if (here.pathname !== '/login') return
  expect(here.searchParams.get('from')).toBe(target.pathname + target.search)
  if (options.wallet) await page.getByLabel(options.wallet, { exact: true }).check()
  await page.locator('#signin').click()
  await page.waitForURL((u) => u.pathname === target.pathname && u.search === target.search, { timeout: 30_000 })
}
