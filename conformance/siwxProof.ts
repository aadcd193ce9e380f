/**
 * A `sign-in-with-x` proof (CAIP-122) as the stock client makes it (@x402/extensions' createSIWxPayload), for
 * conformance rows: bound to the origin the deployment signs in for (its `SERVICE_PUBLIC_ORIGIN`, which is not
 * always the URL the run reaches it at), a fresh nonce, issued now for five minutes, on the login chain. Returns
 * the `SIGN-IN-WITH-X` header value (base64 of the signed payload), which `_meta["sign-in-with-x"]` also takes.
 */
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x'
import { randomBytes } from 'node:crypto'
import type { PrivateKeyAccount } from 'viem/accounts'

export async function siwxProofHeader(account: PrivateKeyAccount, origin: string, resource: string, chainId: string): Promise<string> {
  const url = new URL(resource, origin).toString()
  const now = new Date()
  const payload = await createSIWxPayload(
    {
      domain: new URL(origin).host,
      uri: url,
      version: '1',
      nonce: randomBytes(16).toString('hex'),
      issuedAt: now.toISOString(),
      expirationTime: new Date(now.getTime() + 300_000).toISOString(),
      chainId,
      type: 'eip191',
    },
    account,
    url,
  )
  return encodeSIWxHeader(payload)
}
