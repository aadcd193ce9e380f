import { bazaarExtensions } from '../x402/bazaar.js'
import { EVM_NETWORKS } from '../x402/networks.js'
import { paymentIdentifierExtensions } from '../x402/PaymentIdentifiers.js'

/**
 * The Bazaar discovery declaration of `POST /store` (x402 `extensions.bazaar`), so discovery services index
 * it: a multipart form with one `file` field, answered with the upload result.
 */
export const storeDiscoveryExtensions: Record<string, unknown> = {
  // x402 payment-identifier: a retry with the first request's identifier gets its result and pays once
  ...paymentIdentifierExtensions,
  ...bazaarExtensions({
  method: 'POST',
  bodyType: 'form-data',
  input: { file: '<the bytes to store>' },
  inputSchema: {
    properties: { file: { type: 'string', format: 'binary', description: 'The bytes to store permanently (at least 1 byte).' } },
    required: ['file'],
  },
  outputExample: {
    arTxId: 'Q5Ugu0gC3vn-8z0W1JHRJKRrBxnBD0wpr3v9aLQXk6M',
    sha256: '0957bdf3d5f80717555299483d807254887b9523f9ae3fe07968a67172172bcc',
    sizeBytes: 2048,
    winc: '3814697',
    settlement: { success: true, transaction: '0xd7801a7595a054416a71b7038845b992200e943ec39f6efe4cfd231ab232f5a0', network: EVM_NETWORKS[0]!.network },
  },
}),
}
