/**
 * Which Node installs the project: `npm ci` on every supported line (package.json `engines`) prints no
 * `EBADENGINE`, and on an older line it stops at once, before installing anything, with npm's message naming the
 * supported lines (`.npmrc`: engine-strict). `npm ci --dry-run` in a copy of the manifest, run by each Node:
 * - the Node running this test, plus every binary in `NODE_LINE_BINS` (colon-separated; `.ci/run` sets it to the
 *   Node 22, 24 and 26 it installed);
 * - an unsupported Node: `NODE_UNSUPPORTED_BIN`, or else `/usr/bin/node` when it is older than 22 (the machines
 *   ship Node 20). With neither, that test says so and is skipped.
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
const supportedMajors = engines.split('||').map((range) => Number(/^\s*\^(\d+)\s*$/.exec(range)?.[1]))
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function versionOf(node: string): Promise<string> {
  return (await run(node, ['-v'])).stdout.trim()
}

/** `npm ci --dry-run` of this manifest with `node` first on PATH (npm runs on it): exit code and output. */
async function dryRun(node: string): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'node-line-'))
  dirs.push(dir)
  for (const f of ['package.json', 'package-lock.json', '.npmrc', 'overrides']) cpSync(join(root, f), join(dir, f), { recursive: true })
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` }
  for (const name of Object.keys(env)) if (name.startsWith('npm_config_') || name.startsWith('npm_package_')) delete env[name]
  try {
    const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], { cwd: dir, env, maxBuffer: 64 << 20 })
    return { code: 0, output: stdout + stderr }
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string }
    return { code: err.code, output: err.stdout + err.stderr }
  }
}

describe('Node lines', () => {
  it('engines names whole lines, without patch pins: ^22 || ^24 || ^26', () => {
    expect(supportedMajors).toEqual([22, 24, 26])
    expect(readFileSync(join(root, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m)
  })

  const supported = [process.execPath, ...(process.env.NODE_LINE_BINS ?? '').split(':').filter(Boolean)]
  it.each(supported)('npm ci on %s prints no EBADENGINE', async (node) => {
    const version = await versionOf(node)
    expect(supportedMajors, version).toContain(Number(/^v(\d+)/.exec(version)?.[1]))
    const { code, output } = await dryRun(node)
    expect(output).not.toMatch(/EBADENGINE|notsup/)
    expect(code, output.slice(-2000)).toBe(0)
  }, 120_000)

  it('npm ci on an older Node stops at once and names the supported lines', async (ctx) => {
    let node = process.env.NODE_UNSUPPORTED_BIN
    if (!node && existsSync('/usr/bin/node') && Number(/^v(\d+)/.exec(await versionOf('/usr/bin/node'))?.[1]) < 22) node = '/usr/bin/node'
    if (!node) {
      console.log('no Node older than 22 here (NODE_UNSUPPORTED_BIN, /usr/bin/node): not checked')
      ctx.skip()
      return
    }
    const version = await versionOf(node)
    const started = Date.now()
    const { code, output } = await dryRun(node)
    expect(code).not.toBe(0)
    expect(output).toContain('npm error code EBADENGINE')
    expect(output).toContain(`Required: {"node":"${engines}"}`)
    expect(output).toContain(`Actual:   {"node":"${version}"`)
    expect(output).not.toMatch(/^add /m) // nothing was planned, let alone installed
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 60_000)
})
