/**
 * Every page at a desktop (1280 px) and a phone (390 px) width, signed in: nothing is wider than the screen except
 * inside a box that scrolls (`.wrap`, `pre`, the book's tables), on a desktop the content uses the width, there is
 * no console error, failed request or serious axe violation, and a screenshot of each is written to
 * .tmp/screenshots/layout-<page>-<width>.png to look at.
 */
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, launchBrowser, login, openPage, startSystem, walletFromKey, type System } from './support/index.js'

let system: System
let browser: Browser
let page: Page

beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
  page = (await openPage(browser, { wallets: [walletFromKey(generatePrivateKey())] })).page
  await login(page, '/journal', { origin: system.url })
}, 240_000)
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

// Each page and what shows once it has loaded its data.
const PAGES: [string, string][] = [
  ['/public', '#welcome-view:not([hidden])'],
  ['/storage/', '#uploads-status:not(:text("Loading…"))'],
  ['/insight/', '#events tbody tr'],
  ['/registry/', '#agents tbody tr'],
  ['/dojo', '#partner optgroup'],
  ['/boardroom', '#convene'],
  ['/journal', '#signins tbody tr'],
  ['/coreterm/', '#line'],
  ['/book', '#contents'],
  ['/feedback.html', '#message'],
]

const slug = (path: string) => path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')

/** Elements of the page's own content that stick out of the screen, outside a box meant to scroll sideways. */
const overflowing = (p: Page) =>
  p.evaluate(() =>
    Array.from(document.querySelectorAll('main *'))
      .filter((e) => !e.closest('.wrap, pre, .chapter table, .term'))
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className).split(' ')[0]}` : ''}`),
  )

describe('every page at desktop and phone width', () => {
  for (const width of [1280, 390]) {
    it(`${width} px: fits the screen, uses the width, no error, no serious axe violation`, async () => {
      await page.setViewportSize({ width, height: width > 600 ? 900 : 844 })
      for (const [path, ready] of PAGES) {
        await page.goto(`${system.url}${path}`)
        await page.locator(ready).first().waitFor({ state: 'attached', timeout: 30_000 })
        expect(await overflowing(page), `${path} at ${width} px`).toEqual([])
        // No page scrolls sideways as a whole.
        expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} at ${width} px`).toBeLessThanOrEqual(width)
        if (width === 1280) expect((await page.locator('main').boundingBox())!.width, `${path}: main uses the width`).toBeGreaterThan(1200)
        await checkPage(page, `layout-${slug(path)}-${width}`)
      }
    })
  }
})
