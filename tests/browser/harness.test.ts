/**
 * The harness itself: the system comes up, the injected wallet answers as a browser wallet does (EIP-1193 and
 * EIP-6963), checkPage catches a console error — so a clean check elsewhere means something — and a timed-out wait
 * says what the page showed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recoverMessageAddress, recoverTypedDataAddress, type Hex } from 'viem'
import { generatePrivateKey } from 'viem/accounts'
import type { Browser } from 'playwright-core'
import { checkPage, launchBrowser, openPage, startSystem, waitForVisible, walletFromKey, type System } from './support/index.js'

let system: System
let browser: Browser
beforeAll(async () => {
  ;[system, browser] = await Promise.all([startSystem(), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await system?.close()
})

describe('browser harness', () => {
  it('injects an EIP-1193 wallet (also announced via EIP-6963) whose signatures recover to its key', async () => {
    const wallet = walletFromKey(generatePrivateKey())
    const second = walletFromKey(generatePrivateKey(), { name: 'Second Wallet', rdns: 'org.example.second' })
    const { page, walletLog } = await openPage(browser, { wallets: [wallet, second] })
    await page.goto(`${system.url}/public`)
    const result = await page.evaluate(async () => {
      const announced: { name: string; rdns: string }[] = []
      window.addEventListener('eip6963:announceProvider', (e) => announced.push((e as CustomEvent).detail.info))
      window.dispatchEvent(new Event('eip6963:requestProvider'))
      const eth = (window as unknown as { ethereum: { request: (a: { method: string; params?: unknown[] }) => Promise<unknown> } }).ethereum
      const [account] = (await eth.request({ method: 'eth_requestAccounts' })) as string[]
      const chainId = await eth.request({ method: 'eth_chainId' })
      const signature = await eth.request({ method: 'personal_sign', params: ['0x68656c6c6f', account] })
      const typed = {
        types: { EIP712Domain: [{ name: 'name', type: 'string' }], Mail: [{ name: 'note', type: 'string' }] },
        domain: { name: 'Test' },
        primaryType: 'Mail',
        message: { note: 'hi' },
      }
      const typedSignature = await eth.request({ method: 'eth_signTypedData_v4', params: [account, JSON.stringify(typed)] })
      await eth.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x1' }] })
      const switched = await eth.request({ method: 'eth_chainId' })
      const unsupported = await eth.request({ method: 'eth_sendTransaction' }).catch((e: { code: number }) => e.code)
      return { announced, account, chainId, signature, typedSignature, switched, unsupported }
    })
    expect(result.announced.map((a) => a.name)).toEqual(['Test Wallet', 'Second Wallet'])
    expect(result.account).toBe(wallet.address)
    expect(result.chainId).toBe('0x2105')
    expect(await recoverMessageAddress({ message: 'hello', signature: result.signature as Hex })).toBe(wallet.address)
    const recovered = await recoverTypedDataAddress({
      types: { Mail: [{ name: 'note', type: 'string' }] },
      domain: { name: 'Test' },
      primaryType: 'Mail',
      message: { note: 'hi' },
      signature: result.typedSignature as Hex,
    })
    expect(recovered).toBe(wallet.address)
    expect(result.switched).toBe('0x1')
    expect(result.unsupported).toBe(4200)
    expect(walletLog.map((l) => l.method)).toContain('eth_signTypedData_v4')
    await checkPage(page, 'harness-public')
  })

  it('checkPage fails on a console error, a failed request and a body-less JSON request', async () => {
    const { page } = await openPage(browser)
    await page.goto(`${system.url}/public`)
    await page.evaluate(() => console.error('boom'))
    await expect(checkPage(page, 'harness-console-error')).rejects.toThrow(/boom/)
    await page.evaluate(() => fetch('/no-such-route-for-the-harness').catch(() => undefined))
    await page.waitForTimeout(200)
    await expect(checkPage(page, 'harness-http-error')).rejects.toThrow(/no-such-route/)
    // A body-less request declaring JSON (what broke /cabinet's flow A) is reported even when it succeeds.
    await page.evaluate(() => fetch('/users/session/validate', { headers: { 'content-type': 'application/json', 'X-Session-Token': 'x' } }).catch(() => undefined))
    await page.waitForTimeout(200)
    await expect(checkPage(page, 'harness-json-without-body')).rejects.toThrow(/content-type application\/json without a body/)
  })

  it('waitForVisible, timed out, says where the page was, what it showed and what went wrong', async () => {
    // Signed out, /docs sends the browser to /login: the failure names that page, not only the selector.
    const { page } = await openPage(browser)
    await page.goto(`${system.url}/docs`)
    await page.evaluate(() => fetch('/no-such-route-for-the-harness').catch(() => undefined))
    await page.waitForTimeout(200)
    await expect(waitForVisible(page, '#swagger-ui .information-container', 500)).rejects.toThrow(
      /information-container not visible after \d+ ms on http:\/\/127\.0\.0\.1:\d+\/login\?from=%2Fdocs\n {2}page text: ".*Sign in.*"\n {2}problems: http: GET .*no-such-route-for-the-harness → 401/,
    )
  })

  it('checkPage fails on a serious accessibility violation', async () => {
    // axe runs in legacy mode (support/browser.ts): one axe.run in the page. Our pages cannot hold a frame of their
    // own origin (every page sends frame-ancestors 'none'), so there is no frame for it to miss.
    const { page } = await openPage(browser)
    await page.goto(`${system.url}/public`)
    await checkPage(page, 'harness-a11y-clean')
    // a button with no accessible name: axe's button-name, critical
    await page.evaluate(() => document.body.append(Object.assign(document.createElement('button'), { id: 'nameless' })))
    await expect(checkPage(page, 'harness-a11y-violation')).rejects.toThrow(/button-name[\s\S]*#nameless/)
  })
})
