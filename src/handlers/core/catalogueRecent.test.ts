import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { catalogueEventErrors } from '../../../tests/support/catalogueEventSchemas.js'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'

/** Login is free, so "any logged-in wallet" is anyone; the audit trail is not theirs. */
let gw: TestGateway
const overlord = privateKeyToAccount(generatePrivateKey())

beforeAll(async () => {
  gw = await startTestGateway({ env: { SHADOW_OVERLORD_ADDRESS: overlord.address, SHADOW_JWT_SECRET: randomBytes(32).toString('hex') } })
})
afterAll(async () => {
  await gw?.close()
})

type Event = { kind: string; actor: string; payload: Record<string, unknown> }
const recent = async (headers: Record<string, string>) => {
  const res = await fetch(`${gw.url}/insight/catalogue/recent?limit=500`, { headers })
  expect(res.status).toBe(200)
  return ((await res.json()) as { events: Event[] }).events
}

describe('GET /insight/catalogue/recent: a wallet reads its own events and those that name no one', () => {
  it("a second wallet sees none of the first wallet's events, nor the shadow tier's; the overlord bearer reads all", async () => {
    const alice = privateKeyToAccount(generatePrivateKey())
    const bob = privateKeyToAccount(generatePrivateKey())
    const aliceToken = await gw.login(alice)
    const bobToken = await gw.login(bob)
    // An anonymous visitor redirected by the gate (a salted IP hash: names no one), and a shadow-tier action.
    await fetch(`${gw.url}/journal`, { headers: { accept: 'text/html' }, redirect: 'manual' })
    await fetch(`${gw.url}/admin/shadow/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nonce: `0x${'00'.repeat(32)}`, signature: `0x${'11'.repeat(65)}` }) })

    const bobs = await recent({ 'x-session-token': bobToken })
    const text = JSON.stringify(bobs).toLowerCase()
    expect(text).not.toContain(alice.address.toLowerCase())
    expect(bobs.some((e) => e.kind.startsWith('admin.'))).toBe(false)
    expect(bobs.some((e) => e.kind === 'auth.gate.redirect')).toBe(true)
    expect(bobs.some((e) => e.kind === 'auth.login' && String(e.payload.wallet).toLowerCase() === bob.address.toLowerCase())).toBe(true)
    const alices = JSON.stringify(await recent({ 'x-session-token': aliceToken })).toLowerCase()
    expect(alices).toContain(alice.address.toLowerCase())
    expect(alices).not.toContain(bob.address.toLowerCase())

    const challenge = (await (await fetch(`${gw.url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scope: 'auth' }) })).json()) as { nonce: string; message: string }
    const verified = await fetch(`${gw.url}/admin/shadow/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nonce: challenge.nonce, signature: await overlord.signMessage({ message: challenge.message }) }) })
    const bearer = `Bearer ${((await verified.json()) as { jwt: string }).jwt}`
    await fetch(`${gw.url}/users/logout`, { method: 'POST', headers: { 'x-session-token': aliceToken } })
    const events = await recent({ authorization: bearer })
    const all = JSON.stringify(events).toLowerCase()
    for (const wanted of [alice.address.toLowerCase(), bob.address.toLowerCase(), 'ip_hash', 'admin.shadow_overlord_action', 'auth.logout']) expect(all).toContain(wanted)
    // each as asyncapi/events.yaml declares its kind
    for (const e of events) expect(catalogueEventErrors(e.kind, e.payload)).toBeUndefined()
    expect(gw.validationErrors).toEqual([])
  })
})
