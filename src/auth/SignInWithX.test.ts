import { createSIWxMessage, encodeSIWxHeader, type CompleteSIWxInfo, type SIWxPayload } from '@x402/extensions/sign-in-with-x'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { siwxProof } from '../../tests/support/siwxProof.js'
import { createTestDatabase, type TestDatabase } from '../../tests/support/testDatabase.js'
import { SignInWithX } from './SignInWithX.js'

const ORIGIN = 'https://gw.example'
const wallet = privateKeyToAccount(generatePrivateKey())

let db: TestDatabase
let siwx: SignInWithX
beforeAll(async () => {
  db = await createTestDatabase('sqlite')
  siwx = new SignInWithX({ db: db.db, publicOrigin: ORIGIN, chains: ['eip155:8453'], statement: 'Sign in to pay2store' })
})
afterAll(async () => db?.close())

/** A proof as the stock client makes it, from `info` changed by `alter`. */
const proof = (alter: Partial<CompleteSIWxInfo> = {}, signer = wallet) => siwxProof(signer, `${ORIGIN}/llm/chat`, { statement: 'Sign in to pay2store', ...alter })

/** A proof signed without the client's own origin check (what an attacker or another site's client sends). */
async function rawProof(alter: Partial<CompleteSIWxInfo>): Promise<SIWxPayload> {
  const base = await proof()
  const info = { ...base, ...alter } as CompleteSIWxInfo
  const signature = await wallet.signMessage({ message: createSIWxMessage(info, wallet.address) })
  return { ...base, ...alter, signature } as SIWxPayload
}

const reasonOf = async (header: string) => {
  const outcome = await siwx.check(header)
  return 'reason' in outcome ? outcome.reason : `wallet ${outcome.wallet}`
}

describe('x402 sign-in-with-x', () => {
  it("serves a valid proof as its wallet, once", async () => {
    const header = encodeSIWxHeader(await proof())
    expect(await siwx.authenticate(header)).toMatchObject({ wallet: wallet.address })
    // the same proof again (an eavesdropper, a retrying proxy): its nonce is used
    expect(await reasonOf(header)).toBe('invalid_siwx_nonce')
  })

  it('refuses a proof for another site (domain or uri)', async () => {
    expect(await reasonOf(encodeSIWxHeader(await rawProof({ domain: 'evil.example', uri: 'https://evil.example/x' })))).toBe('invalid_siwx_domain_mismatch')
    expect(await reasonOf(encodeSIWxHeader(await rawProof({ uri: 'https://evil.example/llm/chat' })))).toBe('invalid_siwx_uri_mismatch')
    expect(await reasonOf(encodeSIWxHeader(await rawProof({ uri: 'http://gw.example/llm/chat' })))).toBe('invalid_siwx_uri_mismatch')
  })

  it('refuses an expired or stale proof', async () => {
    const old = new Date(Date.now() - 10 * 60_000)
    expect(await reasonOf(encodeSIWxHeader(await proof({ issuedAt: old.toISOString(), expirationTime: undefined })))).toBe('invalid_siwx_issued_at_too_old')
    const recent = new Date(Date.now() - 60_000)
    expect(await reasonOf(encodeSIWxHeader(await proof({ issuedAt: recent.toISOString(), expirationTime: new Date(Date.now() - 1_000).toISOString() })))).toBe('invalid_siwx_expired')
  })

  it("refuses another chain's signature", async () => {
    expect(await reasonOf(encodeSIWxHeader(await proof({ chainId: 'eip155:1' })))).toBe('invalid_siwx_unsupported_chain')
    // a signature made for chain 1, presented as chain 8453: the message the server rebuilds differs
    const forOne = await proof({ chainId: 'eip155:1' })
    expect(await reasonOf(encodeSIWxHeader({ ...forOne, chainId: 'eip155:8453' }))).toBe('invalid_siwx_signature')
  })

  it('refuses a forged proof: another key signing for the wallet, or a field changed after signing', async () => {
    const other = privateKeyToAccount(generatePrivateKey())
    const byOther = await proof({}, other)
    expect(await reasonOf(encodeSIWxHeader({ ...byOther, address: wallet.address }))).toBe('invalid_siwx_signature')
    const signed = await proof()
    expect(await reasonOf(encodeSIWxHeader({ ...signed, statement: 'Transfer everything' }))).toBe('invalid_siwx_signature')
    expect(await reasonOf('not base64 json')).toBe('invalid_siwx_header')
  })

  it('declares a fresh challenge for the resource in a 402', () => {
    const a = siwx.declaration(`${ORIGIN}/llm/chat`)['sign-in-with-x']!
    const b = siwx.declaration(`${ORIGIN}/llm/chat`)['sign-in-with-x']!
    expect(a.info).toMatchObject({ domain: 'gw.example', uri: `${ORIGIN}/llm/chat`, version: '1' })
    expect(a.info.nonce).not.toBe(b.info.nonce)
    expect(a.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }])
  })
})
