/**
 * What a Mac (arm64, x64) or ARM Linux user gets from `npm ci`. npm's own `--os`/`--cpu` flags make
 * it choose packages as that platform would:
 * - the whole lock, `npm ci --dry-run` in a temporary copy of package.json + package-lock.json: the
 *   platform's Foundry, llama.cpp and esbuild builds are chosen, and no Linux x64 package is;
 * - a real install of `@foundry-rs/anvil` as that platform in a temporary folder: the binary that
 *   devnet/chains/foundryBinary.ts finds there is an executable for that OS and CPU (Mach-O or ELF header).
 * The registry must serve the other platforms' packages (it does for these; see docs/install.md).
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, openSync, readSync, closeSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { foundryBinary } from '../../devnet/chains/foundryBinary.js'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const lock = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(join(root, 'package-lock.json'), 'utf8'))) as {
  packages: Record<string, { version: string }>
}
const anvilVersion = lock.packages['node_modules/@foundry-rs/anvil']!.version

/** Executable header → `os-cpu` (Mach-O 64-bit or ELF 64-bit, little-endian). */
function binaryPlatform(path: string): string {
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(20)
  readSync(fd, head, 0, 20, 0)
  closeSync(fd)
  if (head.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = head.readUInt32LE(4)
    return `darwin-${cpu === 0x0100000c ? 'arm64' : cpu === 0x01000007 ? 'x64' : cpu.toString(16)}`
  }
  if (head.readUInt32BE(0) === 0x7f454c46) {
    const machine = head.readUInt16LE(18)
    return `linux-${machine === 0xb7 ? 'arm64' : machine === 0x3e ? 'x64' : machine.toString(16)}`
  }
  return 'unknown'
}

const PLATFORMS = [
  { os: 'darwin', cpu: 'arm64', expected: ['@foundry-rs/anvil-darwin-arm64', '@foundry-rs/forge-darwin-arm64', '@node-llama-cpp/mac-arm64-metal', '@esbuild/darwin-arm64'] },
  { os: 'darwin', cpu: 'x64', expected: ['@foundry-rs/anvil-darwin-amd64', '@foundry-rs/forge-darwin-amd64', '@node-llama-cpp/mac-x64', '@esbuild/darwin-x64'] },
  { os: 'linux', cpu: 'arm64', expected: ['@foundry-rs/anvil-linux-arm64', '@foundry-rs/forge-linux-arm64', '@node-llama-cpp/linux-arm64', '@esbuild/linux-arm64'] },
] as const

/** A package built for Linux on x64, by the names these ecosystems use. */
const LINUX_X64 = /linux[-_](x64|amd64|x86_64)/

const dirs: string[] = []
// Off the event loop: each folder holds an installed node_modules (a synchronous removal can hold the fork for long).
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))))

describe.each(PLATFORMS)('npm ci as $os-$cpu', ({ os, cpu, expected }) => {
  it('chooses that platform’s Foundry, llama.cpp and esbuild builds from the lock, and no Linux x64 package', async () => {
    const dir = mkdtempSync(join(tmpdir(), `lock-${os}-${cpu}-`))
    dirs.push(dir)
    for (const f of ['package.json', 'package-lock.json', '.npmrc']) cpSync(join(root, f), join(dir, f))
    cpSync(join(root, 'overrides'), join(dir, 'overrides'), { recursive: true })
    const { stdout } = await run(
      'npm',
      ['ci', '--dry-run', '--json', '--ignore-scripts', '--no-audit', '--no-fund', '--os', os, '--cpu', cpu],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    )
    // npm prints one "add <name> <version>" line per package, then the same as JSON.
    const report = JSON.parse(stdout.slice(stdout.indexOf('\n{') + 1)) as { add: { name: string }[] }
    const names = report.add.map((a) => a.name)
    expect(names.length).toBeGreaterThan(500)
    for (const name of expected) expect(names).toContain(name)
    expect(names.filter((n) => LINUX_X64.test(n))).toEqual([])
    expect(names.filter((n) => n.startsWith('@foundry-rs/')).sort()).toEqual(
      ['@foundry-rs/anvil', '@foundry-rs/forge', expected[0], expected[1]].sort(),
    )
  }, 180_000)

  it('installs an anvil that the devnet finds and that is built for that OS and CPU', async () => {
    const dir = mkdtempSync(join(tmpdir(), `anvil-${os}-${cpu}-`))
    dirs.push(dir)
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
    await run(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--os', os, '--cpu', cpu, `@foundry-rs/anvil@${anvilVersion}`],
      { cwd: dir },
    )
    const found = foundryBinary('anvil', os, cpu, dir)
    if (found.path === undefined) throw new Error(found.reason)
    expect(found.packageName).toBe(expected[0])
    expect(binaryPlatform(found.path)).toBe(`${os}-${cpu}`)
    // and this machine's build was not installed beside it
    expect(foundryBinary('anvil', 'linux', 'x64', dir).path).toBeUndefined()
  }, 300_000)
})
