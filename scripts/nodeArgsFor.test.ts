import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { forgetBuildFreshness, nodeArgsFor } from './nodeArgsFor.js'

describe('nodeArgsFor: the compiled build only when it is as new as every source', () => {
  let root: string
  const write = (file: string, at: number) => {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), '//')
    utimesSync(join(root, file), at, at)
  }
  const tsx = ['--import', 'tsx', 'src/main.ts']
  const built = ['dist/src/main.js']

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'node-args-'))
    forgetBuildFreshness()
    for (const source of ['src/main.ts', 'src/db/pool.ts', 'generated/gateway/types.gen.ts']) {
      write(source, 1_000)
      write(join('dist', source.replace(/\.ts$/, '.js')), 2_000)
    }
    write('src/main.test.ts', 3_000) // tests are not in the build
    write('src/types/ambient.d.ts', 3_000) // nor declarations
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  it('runs dist/ when every source has an output written after it', () => {
    expect(nodeArgsFor('src/main.ts', { root, env: {} })).toEqual(built)
  })

  it('runs the source through tsx when one source was edited after the build', () => {
    write('src/db/pool.ts', 3_000)
    expect(nodeArgsFor('src/main.ts', { root, env: {} })).toEqual(tsx)
  })

  it('runs the source when a source has no output (a new file, or no build at all)', () => {
    write('generated/gateway/new.gen.ts', 1_000)
    expect(nodeArgsFor('src/main.ts', { root, env: {} })).toEqual(tsx)
    forgetBuildFreshness()
    rmSync(join(root, 'dist'), { recursive: true })
    expect(nodeArgsFor('src/main.ts', { root, env: {} })).toEqual(tsx)
  })

  it('PAY2STORE_RUN_FROM=source always runs the source', () => {
    expect(nodeArgsFor('src/main.ts', { root, env: { PAY2STORE_RUN_FROM: 'source' } })).toEqual(tsx)
  })

  it('refuses an entry the build does not make', () => {
    expect(() => nodeArgsFor('devnet/main.ts', { root })).toThrow(/not a .ts entry under src/)
  })
})
