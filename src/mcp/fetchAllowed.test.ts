import { describe, expect, it } from 'vitest'
import { fetchAllowed } from './fetchAllowed.js'

const allowed = ['https://files.example']
const options = (fetchFn: typeof fetch, maxBytes = 100) => ({ origins: allowed, maxBytes, timeoutMs: 1_000, fetch: fetchFn })
/** A fetch the allow-list must never reach. */
const never: typeof fetch = () => {
  throw new Error('fetched')
}

describe('fetchAllowed (server-side request forgery)', () => {
  it.each([
    ['another origin', 'http://127.0.0.1:8545/'],
    ['the same host on another port', 'https://files.example:8443/x'],
    ['another scheme', 'http://files.example/x'],
    ['credentials in the URL', 'https://user:pw@files.example/x'],
    ['a look-alike host', 'https://files.example.attacker.test/x'],
  ])('refuses %s before any connection', async (_what, url) => {
    await expect(fetchAllowed(url, options(never))).rejects.toMatchObject({ code: 'url_not_allowed' })
  })

  it('does not follow a redirect (it could lead anywhere)', async () => {
    const seen: string[] = []
    const fetchFn = (async (url: URL, init: RequestInit) => {
      seen.push(`${url} ${init.redirect}`)
      return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/' } })
    }) as unknown as typeof fetch
    await expect(fetchAllowed('https://files.example/x', options(fetchFn))).rejects.toMatchObject({ code: 'url_fetch_failed' })
    expect(seen).toEqual(['https://files.example/x manual'])
  })

  it('bounds the size, declared or not', async () => {
    const big = (async () => new Response(new Uint8Array(101))) as unknown as typeof fetch
    await expect(fetchAllowed('https://files.example/x', options(big))).rejects.toMatchObject({ code: 'payload_too_large' })
    const chunked = (async () =>
      new Response(new ReadableStream({ start(c) { c.enqueue(new Uint8Array(60)); c.enqueue(new Uint8Array(60)); c.close() } }))) as unknown as typeof fetch
    await expect(fetchAllowed('https://files.example/x', options(chunked))).rejects.toMatchObject({ code: 'payload_too_large' })
  })

  it('gives the bytes and type of an allowed file', async () => {
    const ok = (async () => new Response('hello', { headers: { 'content-type': 'text/plain; charset=utf-8' } })) as unknown as typeof fetch
    const got = await fetchAllowed('https://files.example/a.txt', options(ok))
    expect(got.bytes.toString()).toBe('hello')
    expect(got.mimeType).toBe('text/plain')
  })
})
