import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { gatewayNodeFlags, serveNodeFlags } from './gatewayNodeFlags.js'

describe('serveNodeFlags', () => {
  it('takes the flags between node and the entry point', () => {
    expect(serveNodeFlags('node dist/src/main.js')).toEqual([])
    expect(serveNodeFlags('node --max-semi-space-size=32  --max-old-space-size=512 dist/src/main.js')).toEqual(['--max-semi-space-size=32', '--max-old-space-size=512'])
  })

  it('refuses a serve script of another shape, rather than benchmarking something else', () => {
    expect(() => serveNodeFlags('tsx src/main.ts')).toThrow(/serve script/)
    expect(() => serveNodeFlags('node dist/src/other.js')).toThrow(/serve script/)
  })

  it("are the flags of package.json's serve script (what the pipeline benchmark starts the gateway with)", () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { serve: string } }
    expect(pkg.scripts.serve).toBe(['node', ...gatewayNodeFlags, 'dist/src/main.js'].join(' '))
  })
})
