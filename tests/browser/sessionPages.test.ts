/**
 * The session pages in Chromium, signed in with an injected wallet on the whole system (`npm start` on free
 * ports): each page loads with no console error, no failed request and no serious/critical axe violation, and
 * does what it says — /dojo streams an answer token by token and stops on request, /insight/ shows the
 * events this test caused (its feedback and its logins), /registry/ lists the agents, /journal shows the
 * sign-in and the quota the dojo calls spent, /book renders the handbook, /coreterm/ answers, /boardroom
 * explains a missing cabinet and convenes the demo cabinet `npm start` provisioned. Screenshots in .tmp/screenshots/.
 */
import type { Browser, Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, launchBrowser, login, openPage, SCREENSHOTS, startSystem, type System, waitForVisible, walletFromKey } from './support/index.js'

let system: System
let browser: Browser
let tab: Awaited<ReturnType<typeof openPage>>
let page: Page

beforeAll(async () => {
  system = await startSystem()
  browser = await launchBrowser()
  tab = await openPage(browser, { wallets: [walletFromKey(generatePrivateKey())] })
  page = tab.page
  await login(page, '/journal', { origin: system.url })
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await system?.close()
})

describe('session pages in a browser', () => {
  it('/dojo streams a reply token by token from /llm/chat and can be stopped', async () => {
    await page.goto(`${system.url}/dojo`)
    await expect.poll(() => page.locator('#partner option').count(), { timeout: 30_000 }).toBeGreaterThan(1)
    // Only partners that can chat, each once: the five agents (not again as "models"), the chat model, and
    // not the embedding model (it answers "does not support chat").
    const offered = await page.locator('#partner option').evaluateAll((os) => os.map((o) => ({ value: (o as HTMLOptionElement).value, text: o.textContent ?? '' })))
    const agentIds = ((await (await fetch(`${system.url}/agents`, { headers: { 'X-Session-Token': await page.evaluate(() => localStorage.getItem('session_token') ?? '') } })).json()) as { agents: { id: string }[] }).agents.map((a) => a.id)
    expect(agentIds.length).toBe(5)
    expect(offered.filter((o) => o.value.startsWith('agent:')).map((o) => o.value).sort()).toEqual(agentIds.map((id) => `agent:${id}`).sort())
    expect(offered.map((o) => o.value)).toContain('model:svc-tiny-chat:latest')
    expect(offered.filter((o) => /embed/.test(o.value))).toEqual([])
    expect(offered.filter((o) => o.value.startsWith('model:') && agentIds.includes(o.value.slice('model:'.length)))).toEqual([])
    expect(new Set(offered.map((o) => o.value)).size).toBe(offered.length)
    await page.locator('#partner').selectOption({ index: 0 })
    // A built-in test model is chosen: the page says its replies are gibberish by design.
    expect(await page.locator('#test-model-note').isVisible()).toBe(true)
    // Temperature 0, as a user wanting a repeatable answer sets it: sampled, the random-weight test model
    // sometimes ends at once with an empty reply, which would leave nothing streamed to check.
    await page.locator('#temperature').fill('0')
    await page.locator('#prompt').fill('Say hello.')
    // Every text the reply showed, in order: one DOM record per chunk, even when several arrive in one task.
    await page.evaluate(() => {
      const w = window as unknown as { __texts: string[] }
      w.__texts = []
      new MutationObserver((records) => {
        for (const r of records) {
          if (!(r.target instanceof HTMLElement) || !r.target.matches('[data-role="assistant"] .chat')) continue
          r.addedNodes.forEach((n) => n.nodeType === Node.TEXT_NODE && w.__texts.push((n as Text).data))
        }
      }).observe(document.getElementById('transcript')!, { subtree: true, childList: true })
    })
    const response = page.waitForResponse((r) => r.url().endsWith('/llm/chat'))
    await page.locator('#send').click()
    expect((await response).headers()['content-type']).toContain('application/x-ndjson')
    await page.locator('[data-role="assistant"] .chat[data-done="true"]').waitFor({ timeout: 60_000 })
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 30_000 }).toMatch(/^Done/)
    const reply = (await page.locator('[data-role="assistant"] .chat').textContent()) ?? ''
    const texts = await page.evaluate(() => (window as unknown as { __texts: string[] }).__texts)
    expect(reply.length).toBeGreaterThan(0)
    expect(texts.at(-1)).toBe(reply)
    // streamed: the reply was shown growing — several prefixes of the final text before the whole of it
    expect(texts.filter((t) => t.length > 0 && t.length < reply.length && reply.startsWith(t)).length).toBeGreaterThan(0)
    // Bubbles are sized to their text: the short question is a narrow bubble, not a fixed ~115 px box.
    const you = await page.locator('[data-role="user"] .chat').first().boundingBox()
    expect(you!.height).toBeLessThan(60)
    expect(you!.width).toBeLessThan(300)
    await checkPage(page, 'dojo')

    // Stop: once the second reply has started, the request is aborted and the partial reply kept.
    await page.locator('#prompt').fill('Tell me a long story.')
    await page.locator('#send').click()
    await page.waitForFunction(() => {
      const second = document.querySelectorAll<HTMLElement>('[data-role="assistant"] .chat')[1]
      return !!second && ((second.textContent ?? '').length > 0 || second.dataset.done === 'true')
    }, null, { timeout: 60_000 })
    // Pressed in the page itself, so "still streaming?" and the press happen at once (no race with the end).
    const pressed = await page.evaluate(() => {
      const stop = document.getElementById('stop') as HTMLButtonElement
      if (stop.disabled) return false
      stop.click()
      return true
    })
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 30_000 }).toMatch(pressed ? /^Stopped\.$/ : /^Done/)
    expect(await page.locator('#send').isEnabled()).toBe(true)
    await checkPage(page, 'dojo-stopped')
  })

  it('/feedback.html stores the feedback and /insight/ shows it and the logins, filterable by kind, refreshed live', async () => {
    await page.goto(`${system.url}/feedback.html`)
    await page.locator('#message').fill('The dojo streamed nicely.')
    await page.locator('#about').fill('/dojo')
    await page.locator('#rating').selectOption('5')
    await page.locator('#send').click()
    await expect.poll(() => page.locator('#fb-status').textContent(), { timeout: 30_000 }).toMatch(/stored as event evt_/)
    await checkPage(page, 'feedback')

    await page.goto(`${system.url}/insight/`)
    await expect.poll(() => page.locator('#events tbody tr[data-kind="feedback.submitted"]').count(), { timeout: 30_000 }).toBeGreaterThan(0)
    expect(await page.locator('#events tbody tr[data-kind="feedback.submitted"]').first().textContent()).toContain('The dojo streamed nicely.')
    await expect.poll(() => page.locator('#events tbody tr[data-kind="auth.gate.redirect"]').count(), { timeout: 30_000 }).toBeGreaterThan(0)
    await page.locator('#kind').fill('feedback.submitted')
    await page.locator('#kind').dispatchEvent('change')
    await expect.poll(async () => (await page.locator('#events tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')))).every((k) => k === 'feedback.submitted'), { timeout: 30_000 }).toBe(true)
    // Live: an event that happens while the page is open shows up without a reload.
    const shown = await page.locator('#events tbody tr').count()
    const posted = await page.evaluate(async () => {
      const r = await fetch('/feedback', { method: 'POST', headers: { 'X-Session-Token': localStorage.getItem('session_token') ?? '', 'Content-Type': 'application/json' }, body: JSON.stringify({ message: 'Sent while /insight/ was open.' }) })
      return r.status
    })
    expect(posted).toBe(201)
    await expect.poll(() => page.locator('#events tbody tr').count(), { timeout: 30_000 }).toBe(shown + 1)
    expect(await page.locator('#events tbody tr').first().textContent()).toContain('Sent while /insight/ was open.')
    await checkPage(page, 'insight')
  })

  it('/registry/ lists the agents with model, capabilities, status and revision', async () => {
    await page.goto(`${system.url}/registry/`)
    await expect.poll(() => page.locator('#agents tbody tr').count(), { timeout: 30_000 }).toBe(5)
    await page.locator('#agents tbody tr[data-agent="ceo"] button').click()
    await expect.poll(() => page.locator('#detail').textContent(), { timeout: 30_000 }).toContain('"revision"')
    await checkPage(page, 'registry')
  })

  it('/journal shows this session, the quota the two dojo calls spent and the cost calls of today', async () => {
    await page.goto(`${system.url}/journal`)
    await expect.poll(() => page.locator('#journal-status').textContent(), { timeout: 30_000 }).toMatch(/^Activity of 0x/)
    expect(await page.locator('#signins tbody').textContent()).toContain('this session')
    expect(await page.locator('#quota').textContent()).toMatch(/^2 of \d+ cost calls used today/)
    expect(await page.locator('#usage tbody').textContent()).toBe(new Date().toISOString().slice(0, 10) + '2')
    await checkPage(page, 'journal')
  })

  it('the pages use the width, break table text only between words, and write the address one way', async () => {
    /** Words (of table cells and code) that the layout split over two lines, like "svc-tiny-c / hat:latest". */
    const brokenWords = () =>
      page.evaluate(() => {
        const broken: string[] = []
        for (const cell of Array.from(document.querySelectorAll('main td, main th, main code'))) {
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT)
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            // A line may break after a hyphen ("multi-/step"), as browsers do; never inside a word.
            for (const m of (node as Text).data.matchAll(/[^\s-]+/g)) {
              const range = document.createRange()
              range.setStart(node, m.index)
              range.setEnd(node, m.index + m[0].length)
              const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)))
              if (tops.size > 1) broken.push(m[0])
            }
          }
        }
        return broken
      })
    const wallet = await page.locator('#nav-wallet-address').getAttribute('data-wallet')
    expect(wallet).toMatch(/^0x(?=.*[a-f])(?=.*[A-F])[0-9a-fA-F]{40}$/)
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 })
      for (const [path, ready] of [['/registry/', '#agents tbody tr'], ['/insight/', '#events tbody tr'], ['/journal', '#signins tbody tr']] as const) {
        await page.goto(`${system.url}${path}`)
        await page.locator(ready).first().waitFor({ timeout: 30_000 })
        expect(await brokenWords(), `${path} at ${width} px`).toEqual([])
        // On a desktop the content uses the screen, not a ~880 px column.
        if (width === 1280) expect((await page.locator('main section').first().boundingBox())!.width, path).toBeGreaterThan(1100)
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    // One address format: the journal and the catalogue write the wallet as the navigation does (EIP-55).
    await page.goto(`${system.url}/journal`)
    await expect.poll(() => page.locator('#journal-status').textContent(), { timeout: 30_000 }).toBe(`Activity of ${wallet}.`)
    await page.goto(`${system.url}/insight/`)
    await page.locator('#events tbody tr[data-kind="feedback.submitted"]').first().waitFor({ timeout: 30_000 })
    const row = page.locator('#events tbody tr[data-kind="feedback.submitted"]').first()
    expect(await row.locator('td').nth(3).locator('code').getAttribute('title')).toBe(wallet)
    expect(await row.locator('td').nth(4).textContent()).toContain(wallet)
    expect(await page.locator('#events-status').textContent()).toMatch(/^\d+ events?\b/)
    await checkPage(page, 'insight-desktop')
  })

  it('/coreterm/ answers a prompt from the core agent', async () => {
    await page.goto(`${system.url}/coreterm/`)
    await page.locator('#line').fill('/help')
    await page.locator('#line').press('Enter')
    await page.locator('#line').fill('What do you do?')
    await page.locator('#line').press('Enter')
    await expect.poll(() => page.locator('#screen').textContent(), { timeout: 60_000 }).toMatch(/ceo> /)
    await checkPage(page, 'coreterm')
  })

  it('/boardroom says when a company has no cabinet yet', async () => {
    await page.goto(`${system.url}/boardroom`)
    await page.locator('#company').fill('NOCABINET')
    await page.locator('#convene').click()
    await expect.poll(() => page.locator('#board-status').textContent(), { timeout: 30_000 }).toMatch(/No cabinet for this company yet/)
    // …and opens what a cabinet is and how the overlord provisions one
    expect(await page.locator('#cabinet-guide').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true)
    expect(await page.locator('#cabinet-guide').textContent()).toMatch(/Only the overlord .* provisions a cabinet, on \/cabinet/)
    await checkPage(page, 'boardroom', { allow: (p) => (p.url ?? '').endsWith('/boardroom/convene') && (p.status === 404 || /status of 404/.test(p.text)) })
  })

  it("/boardroom convenes the devnet's demo cabinet out of the box: pre-filled, eight weighted votes", async () => {
    await page.goto(`${system.url}/boardroom`)
    expect(await page.locator('#company').inputValue()).toBe('ACME')
    expect(await page.locator('#companies-note').textContent()).toContain('ACME')
    // a cabinet exists: the guide is there for who asks, folded
    expect(await page.locator('details#cabinet-guide').evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false)
    await page.locator('#convene').click()
    await expect.poll(() => page.locator('#board-status').textContent(), { timeout: 60_000 }).toBe('The cabinet of ACME voted.')
    expect(await page.locator('#votes tbody tr').count()).toBe(8)
    expect(await page.locator('#verdict').textContent()).toMatch(/^(Carried|Not carried) — for \d+, against \d+, abstaining \d+/)
    await checkPage(page, 'boardroom-convened')
  })

  it('/book renders the handbook with its contents; /storage/ and /journal fit a phone screen', async () => {
    await page.goto(`${system.url}/book`)
    expect(await page.locator('#contents + ol li').count()).toBeGreaterThan(3)
    await checkPage(page, 'book')
    // The README's screenshots show as images (not "[image: …]" text), served by the gateway itself.
    await page.locator('details.chapter summary').first().click()
    // The opened chapter's images (a closed chapter's lazy images are not loaded until it is opened).
    const images = page.locator('details.chapter[open] img')
    expect(await images.count()).toBeGreaterThan(0)
    for (const img of await images.all()) {
      await img.scrollIntoViewIfNeeded()
      await expect.poll(() => img.evaluate((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth), { timeout: 30_000 }).toBeGreaterThan(0)
    }
    expect(await page.locator('main').textContent()).not.toContain('[image:')
    // A link to another document's chapter opens it.
    await page.locator('a[href="#doc-devnet-readme"]').first().click()
    expect(await page.locator('#doc-devnet-readme').isVisible()).toBe(true)
    // (The whole book open is too tall for a full-page screenshot: the screen as the reader sees it.)
    await page.locator('details.chapter[open] img').first().scrollIntoViewIfNeeded()
    await page.screenshot({ path: `${SCREENSHOTS}/book-readme-image.png` })
    // /docs (swagger-ui) carries the shared navigation back to the other pages.
    await page.goto(`${system.url}/docs`)
    expect(new URL(page.url()).pathname, 'still signed in: /docs itself, not the gate\'s /login').toBe('/docs')
    // swagger-ui fetches, parses and resolves the 354 KB document in the page: 1.0–1.9 s on a quiet machine, more
    // beside busy processes; waitForVisible says what the page showed if it runs out.
    await waitForVisible(page, '#swagger-ui .information-container', 60_000)
    expect(await page.locator('.site-nav a[href="/book"]').isVisible()).toBe(true)
    await page.screenshot({ path: `${SCREENSHOTS}/docs.png`, fullPage: false })
    await page.setViewportSize({ width: 390, height: 844 })
    for (const path of ['/storage/', '/journal']) {
      await page.goto(`${system.url}${path}`)
      // The page's own content stays within the screen (wide tables scroll inside their .wrap box).
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll('main *'))
          .filter((e) => !e.closest('.wrap') && e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .map((e) => `${e.tagName.toLowerCase()}#${e.id}`),
      )
      expect(wide, `${path}: content wider than a phone screen`).toEqual([])
    }
    await checkPage(page, 'storage-phone')
    await page.setViewportSize({ width: 1280, height: 900 })
  })
})
