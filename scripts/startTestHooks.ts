/**
 * `npm start -- --test-hooks` (or `PAY2STORE_TEST_HOOKS=1`): the gateway gets its test hooks port
 * (src/testHooks/: clock, restart, proof file, faults on every peer) on 127.0.0.1:8407, shifted by
 * `DEVNET_PORT_OFFSET` as the devnet's ports are (a free port with DEVNET_FREE_PORTS=1; `SERVICE_TEST_HOOKS__PORT`
 * wins) with a fresh random token, and `npm start` prints the conformance command that uses them. Without the
 * flag nothing changes, and the printed command runs every row that needs no hook.
 */
import { randomBytes } from 'node:crypto'
import { relative } from 'node:path'
import { freePort } from './mock.js'

export const DEFAULT_TEST_HOOKS_PORT = 8407

export type TestHooksSettings = { env: Record<string, string>; url: string; token: string }

export async function testHooksSettings(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<TestHooksSettings | undefined> {
  if (!argv.includes('--test-hooks') && env.PAY2STORE_TEST_HOOKS !== '1') return undefined
  // beside another npm start (DEVNET_PORT_OFFSET, checked with the devnet's ports), on the port shifted as theirs are
  const shifted = DEFAULT_TEST_HOOKS_PORT + Number(env.DEVNET_PORT_OFFSET?.trim() || 0)
  const port = env.SERVICE_TEST_HOOKS__PORT?.trim() ? Number(env.SERVICE_TEST_HOOKS__PORT) : env.DEVNET_FREE_PORTS === '1' ? await freePort() : shifted
  const token = env.SERVICE_TEST_HOOKS__TOKEN?.trim() || randomBytes(32).toString('hex')
  return { env: { SERVICE_TEST_HOOKS: '1', SERVICE_TEST_HOOKS__PORT: String(port), SERVICE_TEST_HOOKS__TOKEN: token }, url: `http://127.0.0.1:${port}`, token }
}

/** The conformance command against what `npm start` started (paths relative to the working directory). */
export function conformanceCommand(p: { gateway: string; modelserver: string; devnetFile?: string; hooks?: TestHooksSettings }): string {
  const args = ['--gateway', p.gateway, '--modelserver', p.modelserver]
  if (p.devnetFile) {
    const near = relative(process.cwd(), p.devnetFile)
    args.push('--devnet', near && !near.startsWith('..') ? near : p.devnetFile)
  }
  if (p.hooks) args.push('--hooks', p.hooks.url, '--hooks-token', p.hooks.token)
  return `npm run conformance -- ${args.join(' ')}`
}
