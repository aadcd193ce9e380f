/**
 * Every admin flow of `/cabinet` in Chromium, driven by the devnet overlord's TEST key as the browser wallet:
 * connect, bearer, unlock A (the server's proof file, as `npm start` writes it) and B (wallet signature),
 * preflight, provision, roster, sign as a member, emergency key release and clear (each with its typed
 * confirmation, and cancelled once first). Zero console errors and failed requests; axe clean; screenshots.
 */
import type { Browser, Page } from 'playwright-core'
import { recoverMessageAddress, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, launchBrowser, openPage, startSystem, walletFromKey, type System, type WalletLog } from './support/index.js'

let system: System
let browser: Browser
let page: Page
let walletLog: WalletLog
const requests: { method: string; path: string; contentType: string | undefined; body: string | null }[] = []
const COMPANY = 'BROWSERCO'

beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
  ;({ page, walletLog } = await openPage(browser, { wallets: [walletFromKey(system.devnet.shadow.overlord.privateKey)] }))
  page.on('request', (r) => {
    const url = new URL(r.url())
    if (url.origin === system.url && r.resourceType() === 'fetch') requests.push({ method: r.method(), path: url.pathname, contentType: r.headers()['content-type'], body: r.postData() })
  })
  await page.goto(`${system.url}/cabinet`)
})
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

/** Presses an action button and waits until it is enabled again (the page disables it while working). */
async function act(action: string) {
  const button = page.locator(`button[data-action="${action}"]`)
  await button.click()
  await expect.poll(() => button.isEnabled(), { timeout: 30_000 }).toBe(true)
}
const log = async () => (await page.locator('#log').textContent()) ?? ''
const lastLog = async () => (await log()).split('\n')[0] ?? ''
const methodsSince = (n: number) => walletLog.slice(n).map((l) => l.method)

describe('/cabinet admin flows', () => {
  it('renders the page (shared navigation, no wallet yet)', async () => {
    expect(await page.locator('#account').textContent()).toBe('not connected')
    expect(await page.locator('#nav-login').isVisible()).toBe(true)
    await checkPage(page, 'cabinet-initial')
  })

  it('connect: the wallet account appears', async () => {
    await act('connect')
    expect((await page.locator('#account').textContent())?.toLowerCase()).toBe(system.devnet.shadow.overlord.address.toLowerCase())
    expect(await lastLog()).toMatch(/wallet connected/)
  })

  it('bearer: one signed auth challenge', async () => {
    const n = walletLog.length
    await act('bearer')
    expect(await page.locator('#bearer').textContent()).toMatch(/^valid until /)
    expect(await lastLog()).toMatch(/bearer issued/)
    expect(methodsSince(n)).toEqual(['personal_sign'])
    await checkPage(page, 'cabinet-bearer')
  })

  it('unlock A (server proof file): a body-less POST without a JSON content type unlocks the vault', async () => {
    const n = requests.length
    await act('unlockA')
    expect(await lastLog()).toMatch(/vault \{"unlocked":true,"flow":"A"\}/)
    const unlock = requests.slice(n).find((r) => r.path === '/vault/credentials/reunlock')!
    expect(unlock).toMatchObject({ method: 'POST', contentType: undefined, body: null })
    await checkPage(page, 'cabinet-unlock-a')
  })

  it('unlock B (sign the unlock message with the wallet)', async () => {
    const n = walletLog.length
    await act('unlockB')
    expect(await lastLog()).toMatch(/vault \{"unlocked":true,"flow":"B"\}/)
    expect(methodsSince(n)).toEqual(['personal_sign'])
  })

  it('preflight, provision and roster', async () => {
    await page.locator('#company').fill(COMPANY)
    await act('preflight')
    expect(await lastLog()).toMatch(/^\S+ {2}preflight \{/)
    const n = walletLog.length
    await act('provision')
    expect(await lastLog()).toMatch(/cabinet provisioned/)
    expect(methodsSince(n)).toEqual(['personal_sign'])
    expect(await page.locator('#roster tr').count()).toBe(9) // header + CEO + seven soldiers
    await page.locator('#roster').evaluate((el) => (el.innerHTML = ''))
    await act('roster')
    expect(await lastLog()).toMatch(/roster loaded/)
    expect(await page.locator('#roster tr').count()).toBe(9)
    expect(await page.locator('#agent option').count()).toBe(8)
    await checkPage(page, 'cabinet-roster')
  })

  it('sign as a member: the signature recovers to the member address', async () => {
    const member = (await page.locator('#agent option').nth(1).textContent())!
    await page.locator('#agent').selectOption(member)
    await page.locator('#message').fill('hello from the browser test')
    await act('sign')
    const text = (await page.locator('#signature').textContent())!
    const address = /address: (0x[0-9a-fA-F]{40})/.exec(text)![1] as Hex
    const signature = /signature: (0x[0-9a-fA-F]+)/.exec(text)![1] as Hex
    expect(await recoverMessageAddress({ message: 'hello from the browser test', signature })).toBe(address)
    const roster = (await page.locator('#roster').textContent())!
    expect(roster.toLowerCase()).toContain(address.toLowerCase())
    await checkPage(page, 'cabinet-sign')
  })

  it('release key: cancelling the confirm does nothing; confirming shows the key once', async () => {
    const member = (await page.locator('#agent option').nth(2).textContent())!
    await page.locator('#agent').selectOption(member)
    const n = requests.length
    page.once('dialog', (d) => void d.dismiss())
    await act('release')
    expect(requests.slice(n)).toEqual([])
    expect(await page.locator('#released').textContent()).toBe('')

    let prompt = ''
    page.once('dialog', (d) => {
      prompt = d.message()
      void d.accept('RELEASE-PRIVATE-KEY')
    })
    await act('release')
    expect(prompt).toContain(member)
    const [agentId, address, privateKey] = (await page.locator('#released').textContent())!.split('\n')
    expect(agentId).toBe(member)
    expect(privateKeyToAccount(privateKey as Hex).address.toLowerCase()).toBe(address!.toLowerCase())
    expect(await log()).not.toContain(privateKey!)
    await checkPage(page, 'cabinet-release')
  })

  it('clear: cancelling the confirm does nothing; typing the confirmation destroys the cabinet', async () => {
    const n = requests.length
    page.once('dialog', (d) => void d.dismiss())
    await act('clear')
    expect(requests.slice(n)).toEqual([])

    page.once('dialog', (d) => void d.accept(`DESTROY-${COMPANY}-CABINET`))
    await act('clear')
    expect(await lastLog()).toMatch(/cabinet cleared/)
    expect(await page.locator('#roster').textContent()).toBe('')
    const roster = await fetch(`${system.url}/cabinet/${COMPANY}`)
    expect(roster.status).toBe(404)
    await checkPage(page, 'cabinet-cleared', { allow: () => false })
  })

  it('no action logged an error, and every request matched the document (bodies only with a JSON type)', async () => {
    expect(await log()).not.toMatch(/error/)
    for (const r of requests) expect(r.contentType === 'application/json', `${r.method} ${r.path}`).toBe(r.body !== null)
    expect(system.output()).not.toMatch(/does not match the OpenAPI document/)
  })
})
