/**
 * Drives the admin page's own script (extracted from the served HTML) in a VM with a minimal DOM and an
 * EIP-1193 wallet backed by the test overlord key, against the live shadow tier: connect → bearer → unlock →
 * provision → roster → sign → release → clear, each through challenge → personal_sign → call.
 */
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { hexToString, recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, testOverlord } from '../../../tests/support/shadowFixtures.js'
import { type ShadowTestApp, startShadowTestApp } from '../../../tests/support/shadowTestApp.js'

type El = { id: string; textContent: string; value: string; innerHTML: string; disabled: boolean; dataset: Record<string, string>; listeners: (() => Promise<void>)[] }

function element(id: string, extra: Partial<El> = {}): El {
  return { id, textContent: '', value: '', innerHTML: '', disabled: false, dataset: {}, listeners: [], ...extra }
}

describe('admin page script (browser wallet flow)', () => {
  const overlord = testOverlord()
  let app: ShadowTestApp
  const elements = new Map<string, El>()
  const buttons: El[] = []
  const signedMessages: string[] = []
  const prompts: string[] = []

  beforeAll(async () => {
    const dataDir = tempDir('shadow-page-')
    app = await startShadowTestApp({
      env: { SHADOW_OVERLORD_ADDRESS: overlord.account.address, SHADOW_JWT_SECRET: overlord.jwtSecretHex, SHADOW_NONCES_PATH: join(dataDir, 'n.sqlite') },
      dataDir,
    })
    const html = await (await fetch(`${app.url}/cabinet`)).text()
    const cfg = /<script type="application\/json" id="cfg">([\s\S]*?)<\/script>/.exec(html)![1]!
    // The page's own script (the shared navigation's script comes first).
    const script = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!).find((s) => s.includes("getElementById('cfg')"))!
    for (const id of ['account', 'bearer', 'unlockMessage', 'company', 'roster', 'agent', 'message', 'signature', 'released', 'log']) elements.set(id, element(id))
    elements.set('cfg', element('cfg', { textContent: cfg }))
    elements.get('company')!.value = 'ACME'
    for (const match of html.matchAll(/data-action="([a-zA-Z]+)"/g)) buttons.push(element(`button-${match[1]}`, { dataset: { action: match[1]! } }))
    const document = {
      getElementById: (id: string) => elements.get(id),
      querySelectorAll: (selector: string) => (selector === 'button[data-action]' ? buttons.map((b) => ({ ...b, addEventListener: (_: string, fn: () => Promise<void>) => b.listeners.push(fn), dataset: b.dataset, set disabled(v: boolean) { b.disabled = v } })) : []),
    }
    const ethereum = {
      request: async ({ method, params }: { method: string; params?: string[] }) => {
        if (method === 'eth_requestAccounts') return [overlord.account.address]
        if (method === 'personal_sign') {
          const message = hexToString(params![0] as `0x${string}`)
          signedMessages.push(message)
          return overlord.account.signMessage({ message })
        }
        throw new Error(`unsupported ${method}`)
      },
    }
    const window = {
      ethereum,
      prompt: (text: string) => {
        prompts.push(text)
        return text.includes('RELEASE-PRIVATE-KEY') ? 'RELEASE-PRIVATE-KEY' : 'DESTROY-ACME-CABINET'
      },
    }
    runInNewContext(script, {
      document,
      window,
      fetch: (path: string, init: RequestInit) => fetch(`${app.url}${path}`, init),
      crypto: globalThis.crypto,
      TextEncoder,
      JSON,
      Date,
      Array,
      Uint8Array,
      Error,
      encodeURIComponent,
    })
  })

  afterAll(async () => app?.close())

  const click = async (action: string) => {
    const button = buttons.find((b) => b.dataset.action === action)!
    for (const fn of button.listeners) await fn()
    const log = elements.get('log')!.textContent
    expect(log.split('\n')[0], `${action}: ${log.split('\n')[0]}`).not.toMatch(/ error /)
  }

  it('shows the unlock message and runs every operation through the wallet', async () => {
    expect(elements.get('unlockMessage')!.textContent).toMatch(/^svc-vault-reunlock\/v1\norigin: http:\/\/gw.test/)
    await click('connect')
    expect(elements.get('account')!.textContent).toBe(overlord.account.address)
    await click('bearer')
    expect(elements.get('bearer')!.textContent).toMatch(/valid until/)
    await click('unlockB')
    await click('provision')
    expect(elements.get('roster')!.innerHTML.match(/<tr><td>/g)).toHaveLength(8)
    expect(elements.get('roster')!.innerHTML).not.toContain('vault_pk_id')
    await click('roster')
    expect(elements.get('agent')!.innerHTML).toContain('company:ACME:cabinet:cfo_finance')
    elements.get('agent')!.value = 'company:ACME:cabinet:cfo_finance'
    elements.get('message')!.value = 'pay 1 USDC'
    await click('sign')
    const [, address, signature] = /address: (0x\w+)\nsignature: (0x\w+)/.exec(elements.get('signature')!.textContent)!
    expect(await recoverMessageAddress({ message: 'pay 1 USDC', signature: signature as `0x${string}` })).toBe(address)
    await click('release')
    const [, releasedAddress, key] = elements.get('released')!.textContent.split('\n')
    expect(privateKeyToAccount(key as `0x${string}`).address).toBe(releasedAddress)
    expect(elements.get('log')!.textContent).not.toContain(key!.slice(2))
    await click('clear')
    expect(prompts.some((p) => p.includes('DESTROY-ACME-CABINET'))).toBe(true)
    expect(signedMessages.map((m) => m.split('\n')[0])).toEqual([
      'svc-shadow-overlord/v1 scope=auth',
      'svc-vault-reunlock/v1',
      'svc-shadow-overlord/v1 scope=cabinet.provision',
      'svc-shadow-overlord/v1 scope=vault.sign',
      'svc-shadow-overlord/v1 scope=release.key',
      'svc-shadow-overlord/v1 scope=cabinet.clear',
    ])
    expect((await fetch(`${app.url}/cabinet/ACME`)).status).toBe(404)
  })
})
