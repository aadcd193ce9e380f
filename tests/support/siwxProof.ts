import { type CompleteSIWxInfo, createSIWxPayload, type SIWxPayload, type SIWxSigner } from '@x402/extensions/sign-in-with-x'

/**
 * A sign-in-with-x proof as the stock client makes it (@x402/extensions' createSIWxPayload) for `url`: this
 * origin's host and the resource, a fresh nonce, issued now for five minutes, on Base (eip155:8453); `alter`
 * changes any field before signing (what another site, a stale or a foreign-chain proof looks like).
 */
export function siwxProof(signer: SIWxSigner, url: string, alter: Partial<CompleteSIWxInfo> = {}): Promise<SIWxPayload> {
  const now = new Date()
  const info: CompleteSIWxInfo = {
    domain: new URL(url).host,
    uri: url,
    version: '1',
    nonce: crypto.randomUUID().replaceAll('-', ''),
    issuedAt: now.toISOString(),
    expirationTime: new Date(now.getTime() + 300_000).toISOString(),
    chainId: 'eip155:8453',
    type: 'eip191',
    ...alter,
  }
  return createSIWxPayload(info, signer, url)
}
