import { generateKeyPairSync } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArweaveSigner, DataItem } from '@dha-team/arbundles/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signDataItemFromFile, storageTags } from './signDataItem.js'

let dir: string
let signer: ArweaveSigner
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sdi-'))
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096, publicExponent: 65537 })
  signer = new ArweaveSigner(privateKey.export({ format: 'jwk' }) as never)
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
})
