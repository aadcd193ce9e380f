import { generateKeyPairSync } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// arbundles (a dev dependency) is the reference reader: it parses and verifies what our own signer wrote
import { DataItem } from '@dha-team/arbundles/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ArweaveSigner } from './dataItem/ArweaveSigner.js'
import { serializeTags, signDataItemHeader } from './dataItem/dataItemHeader.js'
import { signDataItemFromFile, storageTags } from './signDataItem.js'

let dir: string
let signer: ArweaveSigner
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sdi-'))
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096, publicExponent: 65537 })
  signer = new ArweaveSigner(privateKey.export({ format: 'jwk' }))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}

describe('signDataItemFromFile', () => {
  it('produces a data item that arbundles verifies, with the tags and the id', async () => {
    const path = join(dir, 'a.bin')
    const data = Buffer.alloc(300_000, 7)
    data.write('hello', 0)
    await writeFile(path, data)
    const tags = storageTags('my-app', 'ab'.repeat(32), '')
    const item = await signDataItemFromFile(signer, path, BigInt(data.length), tags)
    const raw = await collect(item.open())
    expect(BigInt(raw.length)).toBe(item.length)
    expect(await DataItem.verify(raw)).toBe(true)
    const parsed = new DataItem(raw)
    expect(parsed.id).toBe(item.id)
    expect(item.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(parsed.tags).toEqual(tags)
    expect(Buffer.from(parsed.rawData).equals(data)).toBe(true)
  })

  it('signs bytes in memory (the batch tree file) the same way; one changed byte and arbundles refuses it', async () => {
    const data = Buffer.from('{"root":"0xabc"}')
    const tags = [{ name: 'Content-Type', value: 'application/json' }, { name: 'Name', value: 'ünïcode ✓' }]
    const { id, header } = await signDataItemHeader(signer, tags, data)
    const raw = Buffer.concat([header, data])
    expect(await DataItem.verify(raw)).toBe(true)
    const parsed = new DataItem(raw)
    expect(parsed.id).toBe(id)
    expect(parsed.tags).toEqual(tags)
    expect(Buffer.from(parsed.rawOwner).equals(signer.publicKey)).toBe(true)
    const tampered = Buffer.from(raw)
    tampered[tampered.length - 1]! ^= 1
    expect(await DataItem.verify(tampered)).toBe(false)
  })

  it("keeps to ANS-104's limits on tags and keys", async () => {
    expect(serializeTags([])).toHaveLength(0)
    expect(() => serializeTags(Array.from({ length: 129 }, (_, i) => ({ name: `t${i}`, value: '' })))).toThrow(/at most 128 tags/)
    expect(() => serializeTags([{ name: 'big', value: 'x'.repeat(4096) }])).toThrow(/at most 4096 bytes/)
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 })
    expect(() => new ArweaveSigner(privateKey.export({ format: 'jwk' }))).toThrow(/4096-bit/)
  })
})
