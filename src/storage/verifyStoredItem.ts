import { createHash } from 'node:crypto'
import type { Tag } from './signDataItem.js'

/** Why an item failed verification, as `storage.upload.verified` says it (asyncapi/events.yaml). */
export type VerifyFailure = 'not_found' | 'sha256_mismatch' | 'tag_mismatch'

/** A verification's end carries the confirmations the gateway reported (0 when it was not asked). */
export type VerifyOutcome =
  | { state: 'pending'; note: string }
  | { state: 'verified'; confirmations: number }
  | { state: 'failed'; reason: VerifyFailure; error: string; confirmations: number }

const ID = /^[A-Za-z0-9_-]{43}$/

async function readTags(gatewayUrl: string, id: string, dataHeaders: Headers, timeoutMs: number): Promise<Tag[] | undefined> {
  // 1. ar.io-style data headers: `X-Arweave-Tag-<Name>: <value>`.
  const fromHeaders: Tag[] = []
  dataHeaders.forEach((value, key) => {
    if (key.toLowerCase().startsWith('x-arweave-tag-')) fromHeaders.push({ name: key.slice('x-arweave-tag-'.length), value })
  })
  if (fromHeaders.length > 0) return fromHeaders
  // 2. GraphQL, as served by Arweave gateways for bundled data items.
  try {
    const r = await fetch(`${gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `query { transaction(id: "${id}") { tags { name value } } }` }),
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (r.ok) {
      const body = (await r.json()) as { data?: { transaction?: { tags?: Tag[] } | null } }
      const tags = body.data?.transaction?.tags
      if (Array.isArray(tags)) return tags
    }
  } catch {
    // fall through
  }
  // 3. `/tx/{id}` JSON with base64url-encoded tags (Arweave L1 shape).
  try {
    const r = await fetch(`${gatewayUrl}/tx/${id}`, { signal: AbortSignal.timeout(timeoutMs) })
    if (r.ok) {
      const body = (await r.json()) as { tags?: { name: string; value: string }[] }
      if (Array.isArray(body.tags)) {
        return body.tags.map((t) => ({
          name: Buffer.from(t.name, 'base64url').toString('utf8'),
          value: Buffer.from(t.value, 'base64url').toString('utf8'),
        }))
      }
    }
  } catch {
    // fall through
  }
  return undefined
}

/**
 * Verification rule of seed 4.7: 43-character base64url id; confirmations ≥ 1; SHA-256 of the fetched
 * bytes equals the expected digest; every expected tag name and value matches.
 */
export async function verifyStoredItem(
  gatewayUrl: string,
  id: string,
  expectedSha256: string,
  expectedTags: Tag[],
  timeoutMs = 60_000,
): Promise<VerifyOutcome> {
  const base = gatewayUrl.replace(/\/+$/, '')
  if (!ID.test(id)) return { state: 'failed', reason: 'not_found', error: 'storage id is not 43 characters of base64url', confirmations: 0 }
  let status: Response
  try {
    status = await fetch(`${base}/tx/${id}/status`, { signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    return { state: 'pending', note: `gateway unreachable: ${String(error)}` }
  }
  if (status.status === 202) return { state: 'pending', note: 'pending' }
  if (status.status === 404) return { state: 'pending', note: 'not yet known to the gateway' }
  if (status.status !== 200) return { state: 'pending', note: `status answered HTTP ${status.status}` }
  const info = (await status.json().catch(() => ({}))) as { number_of_confirmations?: number }
  const confirmations = Number(info.number_of_confirmations)
  if (!(confirmations >= 1)) return { state: 'pending', note: 'no confirmation yet' }

  let data: Response
  try {
    data = await fetch(`${base}/${id}`, { signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    return { state: 'pending', note: `gateway unreachable: ${String(error)}` }
  }
  if (!data.ok || !data.body) return { state: 'pending', note: `data answered HTTP ${data.status}` }
  const hash = createHash('sha256')
  const reader = data.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    hash.update(value)
  }
  const actual = hash.digest('hex')
  if (actual !== expectedSha256) return { state: 'failed', reason: 'sha256_mismatch', error: `sha256 mismatch: expected ${expectedSha256}, got ${actual}`, confirmations }

  const tags = await readTags(base, id, data.headers, timeoutMs)
  if (!tags) return { state: 'failed', reason: 'tag_mismatch', error: 'the gateway exposes no tags for this item (no X-Arweave-Tag-* headers, GraphQL or /tx/{id})', confirmations }
  for (const want of expectedTags) {
    const got = tags.filter((t) => t.name.toLowerCase() === want.name.toLowerCase())
    if (!got.some((t) => t.value === want.value)) {
      return { state: 'failed', reason: 'tag_mismatch', error: `tag ${want.name} is ${got.map((t) => JSON.stringify(t.value)).join(', ') || 'missing'}, expected ${JSON.stringify(want.value)}`, confirmations }
    }
  }
  return { state: 'verified', confirmations }
}
