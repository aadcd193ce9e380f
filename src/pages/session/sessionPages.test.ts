/**
 * The session pages as served: every page answers 200 signed in with a CSP that pins exactly its inline
 * script, and that script is valid JavaScript (a broken escape in a template would only show in a browser);
 * the handbook escapes raw HTML, loads no image and links between its chapters in the page.
 */
import { Script } from 'node:vm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentSecurityPolicy } from '../html.js'
import { createHandbookRenderer } from './renderHandbook.js'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'

let gw: TestGateway
let token: string

beforeAll(async () => {
  gw = await startTestGateway()
  token = await gw.login(privateKeyToAccount(generatePrivateKey()))
}, 60_000)
afterAll(async () => gw?.close())

const PAGES: [string, string][] = [
  ['/storage/', 'id="pay"'],
  ['/insight/', 'id="events"'],
  ['/registry/', 'id="agents"'],
  ['/dojo', 'id="stop"'],
  ['/boardroom', 'id="convene"'],
  ['/journal', 'id="quota"'],
  ['/coreterm/', 'id="line"'],
  ['/book', 'id="contents"'],
  ['/feedback.html', 'id="feedback-form"'],
]

describe('session pages', () => {
  it.each(PAGES)('%s renders signed in, its inline script compiles and is pinned by the CSP', async (path, marker) => {
    const r = await fetch(`${gw.url}${path}`, { headers: { cookie: `svc_session=${token}`, accept: 'text/html' } })
    expect(r.status).toBe(200)
    const body = await r.text()
    expect(body).toContain(marker)
    const scripts = [...body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!)
    expect(scripts.length).toBeLessThanOrEqual(2) // the navigation's and the page's own
    for (const source of scripts) expect(() => new Script(source)).not.toThrow()
    expect(r.headers.get('content-security-policy')).toBe(contentSecurityPolicy(body))
    // browsers compile `pattern` with the `v` flag, where an unescaped `-` in a class is a syntax error
    for (const [, pattern] of body.matchAll(/\spattern="([^"]*)"/g)) expect(() => new RegExp(`^(?:${pattern})$`, 'v'), pattern).not.toThrow()
    expect(body).not.toMatch(/<(?:script|link|img)[^>]+(?:src|href)="https?:/)
    expect(gw.validationErrors).toEqual([])
  })

  it('without a session a browser is sent to the login page', async () => {
    const r = await fetch(`${gw.url}/storage/`, { headers: { accept: 'text/html' }, redirect: 'manual' })
    expect(r.status).toBe(302)
    expect(r.headers.get('location')).toBe('/login?from=%2Fstorage%2F')
  })
})

describe('handbook rendering', () => {
  const md = createHandbookRenderer()
  it('escapes raw HTML and drops javascript: links', () => {
    const html = md.render('<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>')
    expect(html).not.toContain('<script>')
    expect(html).not.toContain('<img')
    expect(html).not.toContain('href="javascript:')
    expect(html).toContain('&lt;script&gt;')
  })
  it('shows images as text (nothing is fetched) and turns links to handbook files into chapter anchors', () => {
    const html = md.render('![the storage page](docs/images/storage.png) see [security](docs/security.md) and [design](design.md)')
    expect(html).not.toContain('<img')
    expect(html).toContain('[image: the storage page]')
    expect(html).toContain('href="#doc-security"')
    expect(html).toContain('href="#doc-design"')
  })
})
