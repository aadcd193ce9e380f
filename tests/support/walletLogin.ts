import type { PrivateKeyAccount } from 'viem/accounts'

/**
 * Wallet login through the gateway's HTTP API (challenge, signature, register-with-signature) as any client
 * does it; returns the session token. Shared by the in-process gateway harness and the tests against `npm start`.
 */
export async function walletLogin(url: string, account: PrivateKeyAccount): Promise<string> {
  const c = await fetch(`${url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address }) })
  const { challenge } = (await c.json()) as { challenge: string }
  const signature = await account.signMessage({ message: challenge })
  const r = await fetch(`${url}/users/register-with-signature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: account.address, challenge, signature }),
  })
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${await r.text()}`)
  return ((await r.json()) as { session_token: string }).session_token
}

/** A new `/llm` API key of the wallet holding `sessionToken` (`POST /llm/keys`). */
export async function createLlmKey(url: string, sessionToken: string, name = 'test'): Promise<string> {
  const r = await fetch(`${url}/llm/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': sessionToken }, body: JSON.stringify({ name }) })
  if (r.status !== 201 && r.status !== 200) throw new Error(`POST /llm/keys answered ${r.status}: ${await r.text()}`)
  return ((await r.json()) as { key: string }).key
}
