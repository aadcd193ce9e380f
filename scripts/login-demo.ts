/**
 * Logs a wallet in to a running gateway and opens a session-gated page with the token — what the browser
 * login page does, from a script:
 *
 *   npx tsx scripts/login-demo.ts [--target http://localhost:8000] [--key 0x<private key>]
 *
 * The key defaults to `LOGIN_DEMO_PRIVATE_KEY`, else a fresh random wallet. Steps: POST /users/challenge →
 * sign the EIP-4361 message (EIP-191 personal_sign) → POST /users/register-with-signature → GET /journal
 * with `X-Session-Token`. Exit code 0 when /journal answers 200.
 */
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'

export type LoginDemoResult = { wallet: string; sessionToken: string; journalStatus: number; withoutTokenStatus: number; location: string | null }

export async function loginDemo(target: string, privateKey: `0x${string}`, log: (line: string) => void = () => {}): Promise<LoginDemoResult> {
  const base = target.replace(/\/$/, '')
  const account = privateKeyToAccount(privateKey)
  const anonymous = await fetch(`${base}/journal`, { headers: { accept: 'text/html' }, redirect: 'manual' })
  log(`GET /journal without a session → ${anonymous.status} ${anonymous.headers.get('location') ?? ''}`)
  const challengeResponse = await fetch(`${base}/users/challenge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: account.address }),
  })
  if (challengeResponse.status !== 200) throw new Error(`challenge failed: ${challengeResponse.status} ${await challengeResponse.text()}`)
  const { challenge } = (await challengeResponse.json()) as { challenge: string }
  log(`POST /users/challenge → 200; message to sign:\n${challenge.replace(/^/gm, '    ')}`)
  const signature = await account.signMessage({ message: challenge })
  const registerResponse = await fetch(`${base}/users/register-with-signature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: account.address, challenge, signature }),
  })
  if (registerResponse.status !== 200) throw new Error(`register failed: ${registerResponse.status} ${await registerResponse.text()}`)
  const session = (await registerResponse.json()) as { session_token: string; wallet: string; expires_at: number }
  log(`POST /users/register-with-signature → 200; session for ${session.wallet} until ${new Date(session.expires_at * 1000).toISOString()}`)
  const journal = await fetch(`${base}/journal`, { headers: { 'x-session-token': session.session_token, accept: 'text/html' }, redirect: 'manual' })
  log(`GET /journal with X-Session-Token → ${journal.status}`)
  await journal.arrayBuffer()
  return { wallet: session.wallet, sessionToken: session.session_token, journalStatus: journal.status, withoutTokenStatus: anonymous.status, location: anonymous.headers.get('location') }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const usage = 'usage: npx tsx scripts/login-demo.ts [--target http://localhost:8000] [--key 0x<private key>]\n'
  let values
  try {
    values = parseArgs({ options: { target: { type: 'string', default: 'http://localhost:8000' }, key: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(usage)
    process.exit(0)
  }
  const key = (values.key ?? process.env.LOGIN_DEMO_PRIVATE_KEY ?? generatePrivateKey()) as `0x${string}`
  try {
    const result = await loginDemo(values.target!, key, (line) => process.stdout.write(`${line}\n`))
    process.exit(result.journalStatus === 200 ? 0 : 1)
  } catch (error) {
    // fetch's own message says only "fetch failed": the reason is its cause (ECONNREFUSED…)
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const reason = cause ? ` (${cause.code ?? cause.message})` : ''
    const unreachable = error instanceof TypeError && cause ? `cannot reach ${values.target}${reason}: is the gateway running? (npm start)` : undefined
    process.stderr.write(`${unreachable ?? (error instanceof Error ? error.message : String(error))}\n`)
    process.exit(1)
  }
}
