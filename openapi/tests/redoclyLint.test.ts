/**
 * `npm run lint:spec` lints with @redocly/openapi-core in process (scripts/lint-spec.ts): both documents pass
 * with their rules from redocly.yaml (an unknown API name fails), and a broken example is reported with
 * its rule, file and line, as `redocly lint --format stylish` prints it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { redoclyLint, redoclyLintFile } from '../../scripts/lint-spec.js'
import { repoRoot } from '../../scripts/generate.js'

const dirs: string[] = []
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))))

describe('Redocly lint (openapi-core)', () => {
  it('both documents pass with their redocly.yaml rules', async () => {
    for (const api of ['gateway', 'modelserver']) {
      const r = await redoclyLint(api)
      expect(r.ok, r.output).toBe(true)
    }
    expect((await redoclyLint('nope')).ok).toBe(false)
  })

  it('reports a broken example with its rule, file and line', async () => {
    const source = await readFile(join(repoRoot, 'openapi/gateway.yaml'), 'utf8')
    expect(source).toContain('uptime_s: 3600')
    const dir = await mkdtemp(join(tmpdir(), 'lint-'))
    dirs.push(dir)
    const file = join(dir, 'gateway.yaml')
    await writeFile(file, source.replace('uptime_s: 3600', "uptime_s: 'an hour'"))
    const line = source.slice(0, source.indexOf('uptime_s: 3600')).split('\n').length
    const r = await redoclyLintFile(file, 'gateway')
    expect(r.ok).toBe(false)
    expect(r.output).toMatch(new RegExp(`gateway\\.yaml:${line}:\\d+ {2}error {2}no-invalid-media-type-examples {2}.*uptime_s`))
  })
})
