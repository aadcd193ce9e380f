import { runInNewContext } from 'node:vm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../tests/support/startTestGateway.js'

/**
 * Runs the login page's own script against the live gateway with a stand-in EIP-1193 wallet (a viem account
 * answering `eth_requestAccounts` and `personal_sign`) — the browser flow without a browser.
 */
describe('/login page script', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
  })
  afterAll(async () => {
    await gw?.close()
  })

  async function runLogin(from: string) {
    const account = privateKeyToAccount(generatePrivateKey())
    const html = await (await fetch(`${gw.url}/login?from=${encodeURIComponent(from)}`)).text()
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!
    const elements = new Map<string, { textContent: string; className: string; listeners: Record<string, () => Promise<void>>; addEventListener: (e: string, f: () => Promise<void>) => void }>()
    const element = (id: string) => {
      if (!elements.has(id)) {
        const el = { textContent: '', className: '', listeners: {} as Record<string, () => Promise<void>>, addEventListener: (e: string, f: () => Promise<void>) => void (el.listeners[e] = f) }
        elements.set(id, el)
      }
      return elements.get(id)!
    }
    const storage = new Map<string, string>()
    let assigned: string | undefined
    const requests: string[] = []
    const ethereum = {
      request: async ({ method, params }: { method: string; params?: string[] }) => {
        requests.push(method)
        if (method === 'eth_requestAccounts') return [account.address]
        if (method === 'personal_sign') return account.signMessage({ message: { raw: params![0] as `0x${string}` } })
        throw new Error(`unexpected ${method}`)
      },
    }
    const context = {
      window: { ethereum },
      document: { getElementById: element },
      localStorage: { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => void storage.set(k, v), removeItem: (k: string) => void storage.delete(k) },
      location: { assign: (url: string) => void (assigned = url) },
      fetch: (url: string, init?: RequestInit) => fetch(new URL(url, gw.url), init),
      TextEncoder,
      Array,
      JSON,
      Error,
    }
    runInNewContext(script, context)
    await element('signin').listeners.click!()
    return { account, assigned, token: storage.get('session_token'), status: element('status'), requests }
  }

  it('connects the wallet, signs with personal_sign, keeps the token and returns to from', async () => {
    const { account, assigned, token, requests } = await runLogin('/journal')
    expect(requests).toEqual(['eth_requestAccounts', 'personal_sign'])
    expect(assigned).toBe('/journal')
    const validation = await fetch(`${gw.url}/users/session/validate`, { headers: { 'x-session-token': token! } })
    expect(await validation.json()).toMatchObject({ valid: true, wallet: account.address })
    expect(gw.validationErrors).toEqual([])
  })

  it('returns to / when from is hostile', async () => {
    const { assigned } = await runLogin('https://evil.example/steal')
    expect(assigned).toBe('/')
  })
})
