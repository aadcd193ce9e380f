/**
 * x402 `sign-in-with-x` through the whole gateway: a request that carries a CAIP-122 proof instead of a session
 * token is served as the proof's wallet — on a session API route, behind the gate, and by `POST /mcp`'s tools —
 * once; a replayed, foreign or forged proof leaves the request anonymous (the gate's 401). Proofs are made by the
 * stock client code (@x402/extensions' createSIWxPayload), from the challenge a 402 declares where there is one.
 */
import { randomBytes } from 'node:crypto'
import { createSIWxPayload, encodeSIWxHeader, type CompleteSIWxInfo } from '@x402/extensions/sign-in-with-x'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { parseSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { siwxProof } from '../support/siwxProof.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway({
    env: {
      SERVICE_LOGIN__CHAIN_ID: '8453',
      // every cost call past a quota of 0 is answered with the x402 402 (no facilitator is asked for it)
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '0',
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1000',
      SERVICE_X402__PAY_TO_EVM: privateKeyToAccount(generatePrivateKey()).address,
      FACILITATOR_TOKEN: randomBytes(32).toString('hex'),
    },
  })
})
afterAll(async () => gw?.close())

const ORIGIN = 'http://gw.test' // startTestGateway's SERVICE_PUBLIC_ORIGIN

async function proofHeader(account: PrivateKeyAccount, path: string, alter: Partial<CompleteSIWxInfo> = {}): Promise<Record<string, string>> {
  return { 'SIGN-IN-WITH-X': encodeSIWxHeader(await siwxProof(account, `${ORIGIN}${path}`, alter)) }
}

const get = (path: string, headers: Record<string, string>) => fetch(`${gw.url}${path}`, { headers: { accept: 'application/json', ...headers } })

describe('sign-in-with-x beside Sign-In with Ethereum', () => {
  it('serves a signed request as that wallet, without any login', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const res = await get('/llm/usage?days=1', await proofHeader(account, '/llm/usage'))
    expect(res.status).toBe(200)
    expect(((await res.json()) as { wallet: string }).wallet).toBe(account.address.toLowerCase())
    expect(gw.validationErrors).toEqual([])
  })

  it('serves it once: the same proof again is anonymous', async () => {
    const headers = await proofHeader(privateKeyToAccount(generatePrivateKey()), '/llm/usage')
    expect((await get('/llm/usage?days=1', headers)).status).toBe(200)
    const replayed = await get('/llm/usage?days=1', headers)
    expect(replayed.status).toBe(401)
    expect(await replayed.json()).toMatchObject({ code: 'auth_required' })
  })

  it("is not fooled by another site's proof, an expired one, another chain's or a forged one", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const stale = new Date(Date.now() - 10 * 60_000).toISOString()
    const refused = [
      // signed for another site (its client checks the origin it talks to: a proof made there)
      await proofHeader(account, '/llm/usage', { domain: 'evil.test' }).catch(() => undefined),
      await proofHeader(account, '/llm/usage', { issuedAt: stale, expirationTime: undefined }),
      await proofHeader(account, '/llm/usage', { chainId: 'eip155:1' }),
    ].filter((h): h is Record<string, string> => h !== undefined)
    // another key signs a proof naming the victim's address
    const other = privateKeyToAccount(generatePrivateKey())
    const forged = JSON.parse(Buffer.from((await proofHeader(other, '/llm/usage'))['SIGN-IN-WITH-X']!, 'base64').toString()) as Record<string, unknown>
    refused.push({ 'SIGN-IN-WITH-X': Buffer.from(JSON.stringify({ ...forged, address: account.address })).toString('base64') })
    for (const headers of refused) expect((await get('/llm/usage?days=1', headers)).status).toBe(401)
  })

  it("declares a challenge in a paid route's 402; the stock client's proof of it is served as the wallet", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const last = await fetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...(await proofHeader(account, '/llm/chat')) }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) })
    expect(last.status).toBe(402)
    const body = (await last.json()) as { extensions: Record<string, { info: CompleteSIWxInfo; supportedChains: { chainId: string }[] }> }
    const declared = body.extensions['sign-in-with-x']!
    expect(declared.info).toMatchObject({ domain: 'gw.test', uri: `${ORIGIN}/llm/chat` })
    expect(declared.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }])
    // the stock client signs the declared challenge as is
    const payload = await createSIWxPayload({ ...declared.info, chainId: 'eip155:8453', type: 'eip191' }, account, `${ORIGIN}/llm/usage`)
    const usage = await get('/llm/usage?days=1', { 'SIGN-IN-WITH-X': encodeSIWxHeader(payload) })
    expect(((await usage.json()) as { wallet: string }).wallet).toBe(account.address.toLowerCase())
  })

  it("identifies the MCP chat tool's caller", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const call = async (headers: Record<string, string>) => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: { messages: [{ role: 'user', content: 'hi' }] } } }),
      })
      return ((await res.json()) as { result: { structuredContent: { error: string } } }).result.structuredContent.error
    }
    expect(await call({})).toBe('auth_required')
    // identified: it gets past identity to the wallet's quota (used up: the payment request)
    expect(await call(await proofHeader(account, '/mcp'))).toBe('quota_exceeded')
  })

  it('an MCP tool call refused before it runs (its arguments) leaves the proof in _meta unused', async () => {
    const proof = encodeSIWxHeader(await siwxProof(privateKeyToAccount(generatePrivateKey()), `${ORIGIN}/mcp`))
    const call = async (args: Record<string, unknown>) => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: args, _meta: { 'sign-in-with-x': proof } } }),
      })
      return ((await res.json()) as { result: { structuredContent: { error: string } } }).result.structuredContent.error
    }
    expect(await call({ messages: 'not a list' })).toBe('invalid_arguments')
    // the same proof then identifies the caller (used up here, not by the refused call)
    expect(await call({ messages: [{ role: 'user', content: 'hi' }] })).toBe('quota_exceeded')
    expect(await call({ messages: [{ role: 'user', content: 'hi' }] })).toBe('auth_required')
  })

  // Both accept an EIP-4361 message of this origin, chain and statement: a login challenge and its signature,
  // seen on the way (a logging proxy, an extension), re-encoded as a proof. It must not serve a second time, nor
  // outlive the logout by minting a credential of its own (`POST /llm/keys`).
  it("is not a login signature replayed: the login's challenge, signed, is refused as a proof — used, unused, after logout", async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const challengeOf = async () => ((await (await fetch(`${gw.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address }) })).json()) as { challenge: string }).challenge
    const asProof = async (challenge: string) => {
      const m = parseSiweMessage(challenge)
      const payload = { domain: m.domain, address: account.address, statement: m.statement, uri: m.uri, version: m.version, chainId: `eip155:${m.chainId}`, type: 'eip191', nonce: m.nonce, issuedAt: m.issuedAt?.toISOString(), expirationTime: m.expirationTime?.toISOString(), signature: await account.signMessage({ message: challenge }) }
      return { 'SIGN-IN-WITH-X': Buffer.from(JSON.stringify(payload)).toString('base64') }
    }
    const mintKey = (headers: Record<string, string>) => fetch(`${gw.url}/llm/keys`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name: 'replayed' }) })

    // used to log in, then logged out
    const used = await challengeOf()
    const login = await fetch(`${gw.url}/users/register-with-signature`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address, challenge: used, signature: await account.signMessage({ message: used }) }) })
    const token = ((await login.json()) as { session_token: string }).session_token
    expect((await fetch(`${gw.url}/users/logout`, { method: 'POST', headers: { 'x-session-token': token } })).status).toBe(204)
    const afterLogout = await mintKey(await asProof(used))
    expect(afterLogout.status).toBe(401)
    expect(await afterLogout.json()).toMatchObject({ code: 'auth_required' })

    // captured before the wallet's own login used it
    expect((await mintKey(await asProof(await challengeOf()))).status).toBe(401)

    // the same wallet's own proof is served: what is refused is the login's message, not the wallet
    expect((await mintKey(await proofHeader(account, '/llm/keys'))).status).toBe(201)
    expect(gw.validationErrors).toEqual([])
  })
})
