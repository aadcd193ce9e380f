/**
 * The session pages' own reads: `GET /store/uploads` (the wallet's paid uploads for `/storage/`),
 * `GET /users/me/journal` (`/journal`) and `POST /feedback` (`/feedback.html`), through the whole gateway with
 * response validation in `error` mode. Uploads are written into the storage ledger as a settled payment
 * would leave them (the paid path itself is tested in tests/storage and the browser test of `/storage/`).
 */
import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newDepositId, newUploadId } from '../../storage/ids.js'
import { Ledger } from '../../storage/Ledger.js'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'

let gw: TestGateway
let ledger: Ledger
const alice = privateKeyToAccount(generatePrivateKey())
const bob = privateKeyToAccount(generatePrivateKey())

beforeAll(async () => {
  gw = await startTestGateway()
  ledger = new Ledger(gw.gateway.services.db)
}, 60_000)
afterAll(async () => gw?.close())

/** An upload paid by `payer` (checksummed, as the EIP-3009 `from` arrives), settled or only claimed. */
async function paidUpload(payer: string, settled = true): Promise<string> {
  const depositId = newDepositId()
  const uploadId = newUploadId()
  const txHash = `0x${randomBytes(32).toString('hex')}`
  await ledger.claimWithUpload(
    {
      depositId, payer, nonce: `0x${randomBytes(32).toString('hex')}`, payTo: `0x${'52'.repeat(20)}`, network: 'eip155:8453', asset: `0x${'83'.repeat(20)}`,
      scheme: 'exact', amountAtomic: 5012n, priceAtomic: 5012n, priceUsd: '0.005012', resourceUrl: 'http://gw.test/store', paymentPayload: {},
      ...(settled ? { settled: { txHash, settlement: { success: true, transaction: txHash, network: 'eip155:8453', payer } } } : {}),
    },
    { uploadId, depositId, sha256: randomBytes(32).toString('hex'), mimeType: 'text/plain', sizeBytes: 11n, appName: 'a', payerTag: payer, spoolPath: '/tmp/none' },
    settled ? 'uploading' : 'pending_payment',
  )
  return uploadId
}

const get = (path: string, token?: string) => fetch(`${gw.url}${path}`, { headers: token ? { 'x-session-token': token } : {} })

describe('GET /store/uploads', () => {
  it("lists only the caller's settled uploads, newest first, as GET /store/uploads/{id} shows them", async () => {
    const token = await gw.login(alice)
    const first = await paidUpload(alice.address)
    await ledger.markStored(first, 'Q5Ugu0gC3vn-8z0W1JHRJKRrBxnBD0wpr3v9aLQXk6M', '1853293', 0)
    await ledger.recordVerification(first, true, null)
    await gw.gateway.services.db.updateTable('storage_uploads').set({ created_at: Math.floor(Date.now() / 1000) - 60 }).where('upload_id', '=', first).execute()
    const second = await paidUpload(alice.address)
    await paidUpload(alice.address, false) // payment not settled: not shown
    await paidUpload(bob.address) // someone else's

    const r = await get('/store/uploads', token)
    expect(r.status).toBe(200)
    const body = (await r.json()) as { wallet: string; uploads: { upload_id: string; status: string }[] }
    expect(body.wallet).toBe(alice.address.toLowerCase())
    expect(body.uploads.map((u) => u.upload_id)).toEqual([second, first])
    expect(body.uploads.map((u) => u.status)).toEqual(['uploading', 'verified'])
    const single = await (await get(`/store/uploads/${first}`)).json()
    expect(body.uploads[1]).toEqual(single)

    expect((await (await get('/store/uploads?limit=1', token)).json()).uploads).toHaveLength(1)
    expect((await get('/store/uploads?limit=0', token)).status).toBe(400)
    expect(gw.validationErrors).toEqual([])
  })

  it('needs a session: 401 auth_required for an API call, the login redirect for a browser', async () => {
    const r = await get('/store/uploads')
    expect(r.status).toBe(401)
    expect(await r.json()).toMatchObject({ code: 'auth_required', from: '/store/uploads' })
    const page = await fetch(`${gw.url}/store/uploads`, { headers: { accept: 'text/html' }, redirect: 'manual' })
    expect(page.status).toBe(302)
    expect(page.headers.get('location')).toBe('/login?from=%2Fstore%2Fuploads')
  })
})

describe('GET /users/me/journal', () => {
  it("shows the wallet's sign-ins (the current one marked), today's quota after cost calls, and its uploads", async () => {
    const carol = privateKeyToAccount(generatePrivateKey())
    const older = await gw.login(carol)
    const token = await gw.login(carol)
    await fetch(`${gw.url}/users/logout`, { method: 'POST', headers: { 'x-session-token': older } })
    await gw.gateway.services.quota.consume(carol.address)
    await gw.gateway.services.quota.consume(carol.address)
    const upload = await paidUpload(carol.address)

    const r = await get('/users/me/journal', token)
    expect(r.status).toBe(200)
    const j = await r.json()
    expect(j.wallet).toBe(carol.address.toLowerCase())
    expect(j.first_login_at).toBeTypeOf('number')
    expect(j.sign_ins).toHaveLength(2)
    expect(j.sign_ins.filter((s: { current: boolean }) => s.current)).toHaveLength(1)
    expect(j.sign_ins.find((s: { current: boolean }) => !s.current).revoked_at).toBeTypeOf('number')
    expect(j.quota).toMatchObject({ limit: 100, used: 2, remaining: 98 })
    expect(j.cost_usage).toEqual([{ day: new Date().toISOString().slice(0, 10), calls: 2 }])
    expect(j.uploads.map((u: { upload_id: string }) => u.upload_id)).toEqual([upload])
    expect(gw.validationErrors).toEqual([])
  })

  it('reading the journal spends no quota', async () => {
    const dave = privateKeyToAccount(generatePrivateKey())
    const token = await gw.login(dave)
    await get('/users/me/journal', token)
    const j = await (await get('/users/me/journal', token)).json()
    expect(j.quota).toMatchObject({ used: 0, remaining: 100 })
    expect(j.uploads).toEqual([])
  })
})

describe('POST /feedback', () => {
  it('stores the feedback as a feedback.submitted catalogue event that /insight reads', async () => {
    const token = await gw.login(bob)
    const r = await fetch(`${gw.url}/feedback`, {
      method: 'POST',
      headers: { 'x-session-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Paying from the browser <b>worked</b>.', page: '/storage/', rating: 5 }),
    })
    expect(r.status).toBe(201)
    const { event_id, kind } = await r.json()
    expect(kind).toBe('feedback.submitted')
    const events = await (await get('/insight/catalogue/recent?kind=feedback.submitted&h=true', token)).json()
    const event = events.events.find((e: { event_id: string }) => e.event_id === event_id)
    expect(event).toMatchObject({ actor: bob.address.toLowerCase(), payload: { wallet: bob.address.toLowerCase(), message: 'Paying from the browser <b>worked</b>.', page: '/storage/', rating: 5 } })
    expect(event.summary).toContain('Feedback from')
    expect(gw.validationErrors).toEqual([])
  })

  it('rejects an empty message (400) and an anonymous sender (401)', async () => {
    const token = await gw.login(bob)
    const empty = await fetch(`${gw.url}/feedback`, { method: 'POST', headers: { 'x-session-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ message: '' }) })
    expect(empty.status).toBe(400)
    const anonymous = await fetch(`${gw.url}/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi' }) })
    expect(anonymous.status).toBe(401)
    expect(gw.validationErrors).toEqual([])
  })
})
