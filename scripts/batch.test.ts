import { execFile } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
let dir: string | undefined

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** `npm run batch -- …args` over an empty data directory: its exit code and output. */
async function batch(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  dir ??= await mkdtemp(join(tmpdir(), 'batch-args-'))
  const env = { ...process.env, SERVICE_DATA_DIR: dir, SERVICE_DATABASE_URL: '' }
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'batch', '--', ...args], { cwd: root, env, timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('npm run batch: its command line', () => {
  it('--help prints the usage and runs nothing (it used to run a batch: a commit on chain)', async () => {
    const help = await batch('--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^usage: npm run batch \[-- --cutoff <epoch seconds>\] \[--json\]/)
    expect(await readdir(dir!)).toEqual([])
  })

  it('an unknown flag is a usage error (exit 2) naming it, before anything runs', async () => {
    const typo = await batch('--cutof', '1')
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("Unknown option '--cutof'")
    expect(typo.stderr).toContain('usage: npm run batch')
    expect(await readdir(dir!)).toEqual([])
  })
})
