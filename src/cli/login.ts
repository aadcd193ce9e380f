/**
 * `pay2store login`: the wallet login of the gateway (generated client): `POST /users/challenge` for the
 * key's address, sign the EIP-4361 message (`personal_sign`), `POST /users/register-with-signature`;
 * prints the session token (`X-Session-Token`).
 */
import { privateKeyToAccount } from 'viem/accounts'
import { createClient } from '../../generated/gateway/client/index.js'
import { createLoginChallenge, registerWithSignature } from '../../generated/gateway/sdk.gen.js'
import { CliError, EXIT, unreachable } from './CliError.js'
import { evmKey } from './keys.js'

export type LoginResult = { wallet: string; session_token: string; expires_at: number }

export async function login(gateway: string, options: { keyEnv: string; devnet?: string | boolean }): Promise<LoginResult> {
  const account = privateKeyToAccount(evmKey(options))
  const client = createClient({ baseUrl: gateway.replace(/\/$/, '') })
  const fail = (what: string, status: number | undefined, body: unknown) => {
    const b = body as { error?: string; message?: string } | undefined
    return new CliError(b?.error ?? `http_${status}`, `${what} answered ${status}: ${b?.message ?? b?.error ?? ''}`, status === 400 || status === 401 ? EXIT.usage : EXIT.server)
  }
  let challenge
  try {
    challenge = await createLoginChallenge({ client, body: { wallet: account.address } })
  } catch (error) {
    throw unreachable(gateway, error, 'gateway')
  }
  if (!challenge.response) throw unreachable(gateway, challenge.error, 'gateway') // the generated client returns a failed fetch
  if (!challenge.data) throw fail('POST /users/challenge', challenge.response?.status, challenge.error)
  const message = challenge.data.challenge
  const signature = await account.signMessage({ message })
  const session = await registerWithSignature({ client, body: { wallet: account.address, challenge: message, signature } })
  if (!session.data) throw fail('POST /users/register-with-signature', session.response?.status, session.error)
  return { wallet: session.data.wallet, session_token: session.data.session_token, expires_at: session.data.expires_at }
}
