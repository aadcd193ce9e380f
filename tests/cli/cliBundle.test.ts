/**
 * `npx pay2store` runs a bundle built on first use (bin/cliBundle.mjs): a call costs Node's start and what its
 * command loads, not a TypeScript compile; an edited source is picked up by the next call.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { buildBundle, freshBundle } from '../../bin/cliBundle.mjs'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A tree with a CLI entry whose `main` prints `word`, and a module it loads only when asked. */
function tree(word: string): string {
  const root = mkdtempSync(join(tmpdir(), 'cli-bundle-'))
  dirs.push(root)
  mkdirSync(join(root, 'src/cli'), { recursive: true })
  writeFileSync(join(root, 'src/cli/word.ts'), `export const word: string = '${word}'\n`)
  writeFileSync(join(root, 'src/cli/main.ts'), `export async function main(): Promise<number> {\n  const { word } = await import('./word.js')\n  return word.length\n}\n`)
  return root
}
const run = async (entry: string) => ((await import(`${pathToFileURL(entry).href}?t=${Date.now()}`)) as { main: () => Promise<number> }).main()

describe('the CLI bundle', () => {
  it('is built once, reused while its sources are unchanged, and rebuilt when one changes', async () => {
    const root = tree('one')
    expect(freshBundle(root)).toBeUndefined()
    const first = await buildBundle(root)
    expect(freshBundle(root)).toBe(first)
    expect(await run(first)).toBe(3)
    // an edit, even one that keeps the size, or only a newer modification time: not fresh any more
    writeFileSync(join(root, 'src/cli/word.ts'), `export const word: string = 'two'\n`)
    utimesSync(join(root, 'src/cli/word.ts'), new Date(), new Date(Date.now() + 5_000))
    expect(freshBundle(root)).toBeUndefined()
    writeFileSync(join(root, 'src/cli/word.ts'), `export const word: string = 'three'\n`)
    const second = await buildBundle(root)
    expect(second).not.toBe(first)
    expect(freshBundle(root)).toBe(second)
    expect(await run(second)).toBe(5)
  })

  it('a call of `npx pay2store` costs well under a second of CPU (through tsx, over one)', () => {
    // `store` loads the most: the x402, chain and Algorand libraries; it ends at the unreachable gateway
    const dir = mkdtempSync(join(tmpdir(), 'cli-cpu-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'hello.txt'), 'hello\n')
    writeFileSync(join(dir, 'devnet.json'), JSON.stringify({ accounts: { evm: [{ role: 'payer', privateKey: `0x${'11'.repeat(32)}` }] } }))
    const store = ['bin/pay2store.mjs', 'store', join(dir, 'hello.txt'), '--devnet', join(dir, 'devnet.json'), '--gateway', 'http://127.0.0.1:1']
    execFileSync(process.execPath, ['bin/pay2store.mjs', '--version']) // the first call may build the bundle
    // GNU time: user and system CPU seconds of the whole call, on stderr after the command's own; the least of three
    const cpu = (args: string[], says: string) =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], { encoding: 'utf8' })
          expect(r.stdout + r.stderr).toContain(says)
          const [, user, system] = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr) ?? []
          return Number(user) + Number(system)
        }),
      )
    // Beside it, what any call costs on this machine (Node's start, the bundle's dispatch): `--help`. Through tsx a
    // call compiled the CLI first (about 1.4 s of CPU where `--help` now takes 0.07); `store`'s own modules cost
    // what is beyond `--help`.
    const help = cpu(['bin/pay2store.mjs', '--help'], 'Usage')
    const stored = cpu(store, 'cannot reach http://127.0.0.1:1/store')
    expect(help, `--help ${help} s`).toBeLessThan(0.6)
    expect(stored - help, `store ${stored} s, --help ${help} s`).toBeLessThan(0.5)
  }, 60_000)
})
