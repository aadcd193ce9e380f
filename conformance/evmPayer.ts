/**
 * The `chain` hook's payer for an EVM network: the x402 reference client (`@x402/core` + `@x402/evm` exact
 * scheme) signs an EIP-3009 authorisation with `account` for exactly the requirement the deployment quoted.
 * The chain is read from the RPC (`eth_chainId`), so one `--chain <rpc>` serves the network it runs.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, defineChain, http } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { Payer } from './types.js'

/** The network id (`eip155:<chain id>`) an RPC serves. */
export async function evmNetworkOf(rpcUrl: string): Promise<string> {
  const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) })
  const { result } = (await res.json()) as { result?: string }
  if (!result) throw new Error(`${rpcUrl} did not answer eth_chainId`)
  return `eip155:${Number.parseInt(result, 16)}`
}

export function evmPayer(rpcUrl: string, network: string, account: PrivateKeyAccount): Payer {
  const chainId = Number(network.split(':')[1])
  const chain = defineChain({ id: chainId, name: network, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
  const signer = toClientEvmSigner(account, createPublicClient({ chain, transport: http(rpcUrl) }))
  return async (req) => {
    // Pay exactly the asset the deployment asks for on this network (the client's spend control).
    const client = new x402HTTPClient(
      new x402Client((_v, accepts) => accepts[0]!).register('eip155:*', new ExactEvmScheme(signer)).setSpendControls({ allowedAssets: [{ network: req.network as `${string}:${string}`, asset: req.asset }] }),
    )
    const payload = await client.createPaymentPayload({ x402Version: 2, resource: { url: req.resource, description: req.description, mimeType: req.mimeType }, accepts: [req as never] })
    return client.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE']!
  }
}
