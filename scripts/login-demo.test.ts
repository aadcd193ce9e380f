import { execFile } from 'node:child_process'
import { createServer, type AddressInfo } from 'node:net'
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

  it('--help prints the usage; a gateway that is not there is named, with the reason (not a bare "fetch failed")', async () => {
    const tsx = path.join(root, 'node_modules', '.bin', 'tsx')
    expect((await run(tsx, ['scripts/login-demo.ts', '--help'], { cwd: root })).stdout).toMatch(/^usage: npx tsx scripts\/login-demo\.ts/)
    // a port just given back: nothing listens there
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
    const refused = await run(tsx, ['scripts/login-demo.ts', '--target', `http://127.0.0.1:${port}`], { cwd: root }).catch((e: { code: number; stderr: string }) => e)
    expect(refused).toMatchObject({ code: 1, stderr: `cannot reach http://127.0.0.1:${port} (ECONNREFUSED): is the gateway running? (npm start)\n` })
  })
})
