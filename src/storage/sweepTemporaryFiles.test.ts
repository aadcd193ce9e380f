import { mkdtemp, mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sweepTemporaryFiles, TEMPORARY_FILE_IDLE_MS } from './sweepTemporaryFiles.js'

let dir: string | undefined
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('sweepTemporaryFiles', () => {
  it('removes the files a killed upload left, untouched for an hour; keeps one still being written and directories', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sweep-'))
    const now = Date.now()
    const stale = new Date(now - TEMPORARY_FILE_IDLE_MS - 1_000)
    await writeFile(join(dir, 'upload-left-by-kill'), 'x'.repeat(1024))
    await utimes(join(dir, 'upload-left-by-kill'), stale, stale)
    await writeFile(join(dir, 'spool-left-by-kill'), 'y')
    await utimes(join(dir, 'spool-left-by-kill'), stale, stale)
    await writeFile(join(dir, 'upload-in-progress'), 'z')
    await mkdir(join(dir, 'nested'))
    await utimes(join(dir, 'nested'), stale, stale)
    expect(await sweepTemporaryFiles(dir, TEMPORARY_FILE_IDLE_MS, now)).toBe(2)
    expect((await readdir(dir)).sort()).toEqual(['nested', 'upload-in-progress'])
  })

  it('a directory not made yet (no upload since the install) is nothing to sweep', async () => {
    expect(await sweepTemporaryFiles(join(tmpdir(), 'never-made-' + process.pid, 'tmp'))).toBe(0)
  })
})
