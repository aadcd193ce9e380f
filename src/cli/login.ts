/**
 * `pay2store login`: the wallet login of the gateway (generated client): `POST /users/challenge` for the
 * key's address, sign the EIP-4361 message (`personal_sign`), `POST /users/register-with-signature`;
 * prints the session token (`X-Session-Token`). `pay2store uploads`: signs in the same way (no payment) and lists
 * the wallet's uploads (`GET /store/uploads`) — how a payer whose upload's answer was lost finds it.
 */
import { createClient } from '../../generated/gateway/client/index.js'
import { createLoginChallenge, registerWithSignature } from '../../generated/gateway/sdk.gen.js'
import type { UploadStatus } from '../../generated/gateway/types.gen.js'
import { CliError, EXIT, httpError, request, unreachable } from './CliError.js'
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

/** The signed-in wallet's uploads, newest first (`GET /store/uploads`, at most `limit`). */
export async function uploads(gateway: string, options: Record<string, unknown> & { devnet?: string | boolean }, limit: number): Promise<{ wallet: string; uploads: UploadStatus[] }> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new CliError('bad_option', '--limit takes a whole number from 1 to 200', EXIT.usage)
  const session = await login(gateway, options)
  const res = await request(`${gateway.replace(/\/$/, '')}/store/uploads?limit=${limit}`, { headers: { 'X-Session-Token': session.session_token } }, 'gateway')
  if (res.status !== 200) throw await httpError(res, 'GET /store/uploads')
  const body = (await res.json()) as { uploads: UploadStatus[] }
  return { wallet: session.wallet, uploads: body.uploads }
}

/** The uploads for a person: a block of lines each (80 columns), ids and hashes never cut. */
export function describeUploads(r: { wallet: string; uploads: UploadStatus[] }): string {
  if (r.uploads.length === 0) return `no uploads paid by ${r.wallet}`
  return r.uploads
    .map((u) =>
      [
        `storage id   ${u.ar_tx_id ?? `not stored yet (upload ${u.upload_id})`}`,
        `status       ${u.status}, ${u.size_bytes} bytes, paid ${new Date(u.created_at * 1000).toISOString()}`,
        `sha256       ${u.sha256}`,
      ].join('\n'),
    )
    .join('\n\n')
}
