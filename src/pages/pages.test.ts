/**
 * The pages a newcomer meets first, as served by the whole gateway: the signed-out home page says what the product
 * is and what each page does, and its claim of which pages need a wallet sign-in is the gate's own answer; the API
 * documents are open; /boardroom with no cabinet says what a cabinet is and how to get one; /storage/ without paid
 * storage says so.
 */
import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../tests/support/startTestGateway.js'
import { SITE_PAGES } from './sitePages.js'

let gw: TestGateway

beforeAll(async () => {
  gw = await startTestGateway({ env: { SHADOW_OVERLORD_ADDRESS: privateKeyToAccount(generatePrivateKey()).address, SHADOW_JWT_SECRET: randomBytes(32).toString('hex') } })
}, 60_000)
afterAll(async () => gw?.close())

const html = async (path: string, headers: Record<string, string> = {}) => {
  const r = await fetch(`${gw.url}${path}`, { headers: { accept: 'text/html', ...headers }, redirect: 'manual' })
  return { status: r.status, location: r.headers.get('location'), body: await r.text() }
}
const text = (body: string) => body.replace(/<script>[\s\S]*?<\/script>|<style>[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')

describe('the signed-out home page', () => {
  it.each(['/', '/public'])('%s says what the product is, without a script', async (path) => {
    const { status, body } = await html(path)
    expect(status).toBe(200)
    const words = text(body)
    expect(words).toMatch(/pay2store Store files permanently, paid from your wallet/)
    expect(words).toMatch(/Arweave/)
    expect(words).toMatch(/receipt/)
  })

  it('lists every page with what it does and whether it needs a wallet sign-in — and the gate agrees with each claim', async () => {
    const { body } = await html('/')
    const listed = [...body.matchAll(/<li data-path="([^"]+)" data-needs="(wallet|nothing)"><a href="\1">[^<]+<\/a><span class="needs[^"]*">([^<]+)<\/span><p class="muted">([^<]+)<\/p>/g)].map((m) => ({ path: m[1]!, needs: m[2]!, badge: m[3]!, what: m[4]! }))
    expect(listed.map((p) => p.path)).toEqual(SITE_PAGES.map((p) => p.path))
    for (const page of listed) {
      expect(page.what.length, page.path).toBeGreaterThan(20)
      expect(page.badge).toBe(page.needs === 'wallet' ? 'wallet sign-in' : 'open to everyone')
      const opened = await html(page.path)
      if (page.needs === 'wallet') expect([opened.status, opened.location], page.path).toEqual([302, `/login?from=${encodeURIComponent(page.path)}`])
      else expect(opened.status, page.path).toBe(200)
    }
    // the handbook and the explorer stay behind the session (the tier matrix); the documents themselves are open
    expect(listed.find((p) => p.path === '/book')!.needs).toBe('wallet')
    expect(listed.find((p) => p.path === '/docs')!.needs).toBe('wallet')
    for (const doc of ['/doc/openapi/gateway.yaml', '/doc/openapi/modelserver.yaml', '/doc/asyncapi/events.yaml']) expect((await fetch(`${gw.url}${doc}`)).status, doc).toBe(200)
    expect(text((await html('/docs.html')).body)).toMatch(/no sign-in is needed to read them or to generate a client/)
    expect(gw.validationErrors).toEqual([])
  })
})

describe('/boardroom without a cabinet', () => {
  it('says what a cabinet is, that the overlord provisions it on /cabinet, and the steps; the form offers nothing to fail on', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const { status, body } = await html('/boardroom', { cookie: `svc_session=${token}` })
    expect(status).toBe(200)
    const words = text(body)
    expect(body).toMatch(/<section id="cabinet-guide"[^>]*><h2 id="guide-h">No cabinet yet<\/h2>/)
    expect(words).toMatch(/eight agent wallets/)
    expect(words).toMatch(/Only the overlord .* provisions a cabinet, on \/cabinet/)
    expect(words).toMatch(/Connect the overlord's wallet\. Get a bearer: sign one challenge\. Unlock the vault.*Provision/)
    // not the devnet profile: the operator is asked
    expect(words).toMatch(/Ask the operator of this gateway for a cabinet/)
    expect(body).toMatch(/<input id="company"[^>]* value=""/)
    expect(words).toMatch(/No company has a cabinet yet\./)
  })
})

describe('/storage/ without paid storage', () => {
  it('says uploads are off here and names no address of the devnet', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const { status, body } = await html('/storage/', { cookie: `svc_session=${token}` })
    expect(status).toBe(200)
    expect(text(body)).toMatch(/Paid storage is not configured on this gateway: uploads are off\./)
    expect(body).toMatch(/<input id="file" type="file" disabled>/)
    expect(body).not.toMatch(/127\.0\.0\.1|localhost:/)
  })
})
