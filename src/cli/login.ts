/**
 * `pay2store login`: the wallet login of the gateway (generated client): `POST /users/challenge` for the
 * key's address, sign the EIP-4361 message (`personal_sign`), `POST /users/register-with-signature`;
 * prints the session token (`X-Session-Token`).
 */
import { createClient } from '../../generated/gateway/client/index.js'
import { createLoginChallenge, registerWithSignature } from '../../generated/gateway/sdk.gen.js'
import { CliError, EXIT, unreachable } from './CliError.js'
import { clientRailFor } from '../x402/rails/clientRails.js'
import { payerOf } from './keys.js'
import { RAILS, SIGN_IN_RAIL } from './rails.js'

export type LoginResult = { wallet: string; session_token: string; expires_at: number }

export async function login(gateway: string, options: Record<string, unknown> & { devnet?: string | boolean }): Promise<LoginResult> {
  // the key of the default rail's payer: its accounts are the gateway's wallets (EIP-4361)
  const rail = clientRailFor(RAILS.get(SIGN_IN_RAIL) ?? '')
  const payer = rail ? await payerOf(rail, options) : undefined
  if (!payer?.signMessage) throw new CliError('not_payable', `the ${SIGN_IN_RAIL} rail's accounts cannot sign in`, EXIT.usage)
  const account = { address: payer.address, signMessage: ({ message }: { message: string }) => payer.signMessage!(message) }
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
