import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../tests/support/startTestGateway.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '..')

describe('scripts/login-demo.ts', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
  })
  afterAll(async () => {
    await gw?.close()
  })

  it('a script with a private key logs in and gets 200 on /journal with the token', async () => {
    const { stdout } = await run(path.join(root, 'node_modules', '.bin', 'tsx'), ['scripts/login-demo.ts', '--target', gw.url, '--key', generatePrivateKey()], { cwd: root })
    expect(stdout).toContain('GET /journal without a session → 302 /login?from=%2Fjournal')
    expect(stdout).toContain('POST /users/register-with-signature → 200')
    expect(stdout).toContain('GET /journal with X-Session-Token → 200')
    expect(gw.validationErrors).toEqual([])
  })
})
