import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../../tests/support/shadowFixtures.js'
import { writeFileAtomic, writeJsonAtomic } from './writeFileAtomic.js'

describe('writeFileAtomic', () => {
  it('replaces the file whole; concurrent writers never leave a torn file or temp files', async () => {
    const dir = tempDir('atomic-')
    const path = join(dir, 'registry.json')
    const big = (n: number) => ({ n, filler: 'x'.repeat(200_000) })
    await Promise.all(Array.from({ length: 20 }, (_, n) => writeJsonAtomic(path, big(n))))
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { n: number; filler: string }
    expect(parsed.filler).toHaveLength(200_000)
    expect(readdirSync(dir)).toEqual(['registry.json'])
  })

  it('leaves the old content and no temp file when the write fails', async () => {
    const dir = tempDir('atomic-')
    const path = join(dir, 'vault.json')
    writeFileSync(path, 'old')
    await expect(writeFileAtomic(join(path, 'not-a-dir', 'x'), 'new')).rejects.toThrow()
    expect(readFileSync(path, 'utf8')).toBe('old')
    expect(readdirSync(dir)).toEqual(['vault.json'])
  })
})
