/**
 * The EVM rails' client side: the payer's key from `--key-env` (default `PAY2STORE_PRIVATE_KEY`, 0x + 64 hex
 * digits) or the devnet file's first EVM payer, and the payment built by the stock x402 client (`@x402/core` +
 * `@x402/evm`, default spend controls: the canonical USDC, at most $1 per payment unless `--max-usd` says more).
 * The key itself is never printed.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { type ClientKeySource, type ClientPayer, type ClientPayInput, type ClientPayment, ClientPaymentError, refuseAboveMaxUsd } from '../ClientRail.js'

type DevnetAccounts = { accounts?: { evm?: { role: string; privateKey: `0x${string}` }[] } }

/** The EVM payer's private key (from the environment or the devnet file). */
export function evmClientKey({ options, devnet, env }: ClientKeySource): `0x${string}` {
  if (devnet) {
    const payer = (devnet.file as DevnetAccounts).accounts?.evm?.find((a) => a.role === 'payer')
    if (!payer) throw new ClientPaymentError('no_key', `${devnet.path} lists no EVM payer account`)
    return payer.privateKey
  }
  const keyEnv = String(options.keyEnv ?? 'PAY2STORE_PRIVATE_KEY')
  const raw = env[keyEnv]?.trim()
  if (!raw) throw new ClientPaymentError('no_key', `no private key: set ${keyEnv} (0x + 64 hex digits) or pass --devnet`)
  const key = raw.startsWith('0x') ? raw : `0x${raw}`
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ClientPaymentError('bad_key', `${keyEnv} is not a private key (0x + 64 hex digits)`)
  return key as `0x${string}`
}

class EvmClientPayer implements ClientPayer {
  readonly #account: PrivateKeyAccount

  constructor(account: PrivateKeyAccount) {
    this.#account = account
  }

  get address(): string {
    return this.#account.address
  }

  async pay(input: ClientPayInput): Promise<ClientPayment> {
    // said here in the option's words; the stock client's spend control below stays as the backstop
    refuseAboveMaxUsd(input)
    const caps = input.maxUsd === undefined ? {} : { maxAmountPerPayment: `$${input.maxUsd}` }
    const client = new x402Client()
    client.register(input.offered.network as `${string}:${string}`, new ExactEvmScheme(toClientEvmSigner(this.#account))).setSpendControls(caps as never)
    let payload
    try {
      payload = await new x402HTTPClient(client).createPaymentPayload(input.required as never)
    } catch (error) {
      throw new ClientPaymentError('not_payable', `cannot pay this quote: ${(error as Error).message}`)
    }
    const accepted = payload.accepted as ClientPayment['payload']['accepted']
    input.say(`paying ${input.describeAmount(accepted.amount, accepted.asset)} on ${input.railName} from ${this.address}`)
    return { payload: payload as unknown as ClientPayment['payload'], payer: this.address }
  }

  signMessage(message: string): Promise<string> {
    return this.#account.signMessage({ message })
  }
}

/** The EVM payer of `source`'s key. */
export function evmClientPayer(source: ClientKeySource): ClientPayer {
  return new EvmClientPayer(privateKeyToAccount(evmClientKey(source)))
}
