/**
 * The session pages as served: every page answers 200 signed in with a CSP that pins exactly its inline
 * script, and that script is valid JavaScript (a broken escape in a template would only show in a browser);
 * the handbook escapes raw HTML, shows only its own images and links between its chapters in the page.
 */
import { Script } from 'node:vm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentSecurityPolicy } from '../html.js'
import { findRepoRoot } from '../../config/findRepoRoot.js'
import { chapterId, createHandbookRenderer, renderHandbook } from './renderHandbook.js'
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
  it('shows images from docs/images/ (served by the gateway) and turns links to handbook files into chapter anchors', () => {
    const html = md.render('![the storage page](docs/images/storage.png) see [security](docs/security.md) and [the devnet](devnet/README.md)')
    expect(html).toContain('<img src="/doc/images/storage.png" alt="the storage page" loading="lazy">')
    expect(html).toContain('href="#doc-security"')
    expect(html).toContain('href="#doc-devnet-readme"')
    // Paths are relative to the file they are written in.
    const fromDocs = md.render('[back](../README.md), [design](design.md), ![x](images/cabinet.png)', { file: 'docs/security.md' })
    expect(fromDocs).toContain('href="#doc-readme"')
    expect(fromDocs).toContain('href="#doc-design"')
    expect(fromDocs).toContain('src="/doc/images/cabinet.png"')
    // Headings carry GitHub's ids (per chapter), so a file's own #section links and another's file.md#section work.
    const own = md.render('## Browser tests\n\nSee [below](#browser-tests) and [tiers](docs/security.md#the-tiers).', { file: 'README.md' })
    expect(own).toContain('<h2 id="doc-readme--browser-tests">Browser tests</h2>')
    expect(own).toContain('href="#doc-readme--browser-tests"')
    expect(own).toContain('href="#doc-security--the-tiers"')
    // An image from elsewhere is never fetched; a repository file the gateway does not serve is no dead link.
    const other = md.render('![remote](https://example.com/x.png) ![up](../../etc/x.png) [code](src/app.ts) [spec](openapi/gateway.yaml)')
    expect(other).not.toContain('<img')
    expect(other).toContain('<a title="src/app.ts (in the repository; not part of the handbook)">code</a>')
    expect(other).toContain('href="/doc/openapi/gateway.yaml"')
  })

  it('the repository\'s handbook has every document the README mentions, and every link and image of it works', async () => {
    const chapters = renderHandbook(findRepoRoot())
    const ids = new Set(chapters.map((c) => c.id))
    for (const file of ['README.md', 'docs/reliability.md', 'devnet/README.md', 'src/modelserver/README.md', 'contracts/README.md']) expect(ids, file).toContain(chapterId(file))
    const html = chapters.map((c) => c.html).join('\n')
    const anchors = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]))
    for (const [, href] of html.matchAll(/<a href="([^"]+)"/g)) {
      if (/^https?:/.test(href!)) continue
      if (href!.startsWith('#')) expect(ids.has(href!.slice(1)) || anchors.has(href!.slice(1)), href).toBe(true)
      else expect((await fetch(`${gw.url}${href}`)).status, href).toBe(200)
    }
    const images = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!)
    expect(images.length).toBeGreaterThan(0)
    for (const src of images) {
      const r = await fetch(`${gw.url}${src}`)
      expect(r.status, src).toBe(200)
      expect(r.headers.get('content-type'), src).toMatch(/^image\//)
    }
    expect(html).not.toContain('[image:')
  })
})
