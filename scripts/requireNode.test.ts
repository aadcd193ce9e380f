import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
const script = join(root, 'scripts/requireNode.mjs')

/** Runs the check as a process whose Node reports `version`. */
async function checkAs(version: string): Promise<{ code: number; stderr: string }> {
  const pretend = `data:text/javascript,Object.defineProperty(process,'versions',{value:{...process.versions,node:${JSON.stringify(version)}}})`
  try {
    const { stderr } = await run(process.execPath, ['--import', pretend, script], { cwd: root })
    return { code: 0, stderr }
  } catch (error) {
    const e = error as { code: number; stderr: string }
    return { code: e.code, stderr: e.stderr }
  }
}

describe('the Node line check before npm start, serve, batch, devnet and modelserver', () => {
  it('an unsupported line stops with why and what to do, where the native modules crashed without a word', async () => {
    const refused = await checkAs('20.20.2')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('pay2store needs Node 22, 24, 26 (package.json "engines"); this is Node 20.20.2')
    expect(refused.stderr).toContain('nvm use 24')
  })

  it('every line of engines passes, silently; each of those scripts runs it first', async () => {
    for (const version of ['22.23.5', '24.22.3', '26.12.1']) expect(await checkAs(version), version).toEqual({ code: 0, stderr: '' })
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
    for (const name of ['serve', 'devnet', 'modelserver']) expect(scripts[`pre${name}`], name).toBe('node scripts/requireNode.mjs')
    // npm start and npm run batch: their scripts' first import (no second process before a start that is timed)
    for (const script of ['scripts/start.ts', 'scripts/batch.ts']) {
      expect(readFileSync(join(root, script), 'utf8').match(/^import .*$/m)?.[0], script).toBe("import './requireNode.mjs'")
    }
  })
})
