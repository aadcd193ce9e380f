/**
 * The Algorand rail's client side: no x402 client pays Algorand, so the client does what the 402 asks itself
 * (./payAlgorand.ts) and names its transaction (`payload.txId`). The payer is a 25-word mnemonic from
 * `--algorand-key-env` (default `PAY2STORE_ALGORAND_MNEMONIC`) with its node from `--algod` and the token in
 * `--algod-token-env`, or the devnet file's first Algorand payer and node (an explicit `--algod` wins). The key
 * itself is never printed.
 */
import algosdk from 'algosdk'
import { type ClientKeySource, type ClientPayer, type ClientPayInput, type ClientPayment, ClientPaymentError, refuseAboveMaxUsd } from '../ClientRail.js'
import { type AlgorandRequirement, payAlgorand } from './payAlgorand.js'

type DevnetAlgorand = { algorand?: { url?: string; token?: string }; accounts?: { algorand?: { role: string; mnemonic: string }[] } }

export type AlgorandClientKey = { account: algosdk.Account; algodUrl: string; algodToken: string }

/** The Algorand payer and its node. */
export function algorandClientKey({ options, devnet, env }: ClientKeySource): AlgorandClientKey {
  const keyEnv = String(options.algorandKeyEnv ?? 'PAY2STORE_ALGORAND_MNEMONIC')
  const tokenEnv = String(options.algodTokenEnv ?? 'PAY2STORE_ALGOD_TOKEN')
  let mnemonic: string | undefined
  let algodUrl = typeof options.algod === 'string' ? options.algod : undefined
  let algodToken = env[tokenEnv]?.trim() ?? ''
  if (devnet) {
    const file = devnet.file as DevnetAlgorand
    mnemonic = file.accounts?.algorand?.find((a) => a.role === 'payer')?.mnemonic
    if (!mnemonic) throw new ClientPaymentError('no_key', `${devnet.path} lists no Algorand payer account`)
    algodUrl ??= file.algorand?.url
    algodToken = algodToken || (file.algorand?.token ?? '')
  } else {
    mnemonic = env[keyEnv]?.trim()
    if (!mnemonic) throw new ClientPaymentError('no_key', `no Algorand key: set ${keyEnv} (25-word mnemonic) or pass --devnet`)
  }
  let account: algosdk.Account
  try {
    account = algosdk.mnemonicToSecretKey(mnemonic.split(/\s+/).join(' '))
  } catch {
    throw new ClientPaymentError('bad_key', `${devnet ? 'the devnet file' : keyEnv} does not hold a valid Algorand mnemonic`)
  }
  return { account, algodUrl: algodUrl ?? 'http://127.0.0.1:8405', algodToken }
}

class AlgorandClientPayer implements ClientPayer {
  readonly #key: AlgorandClientKey

  constructor(key: AlgorandClientKey) {
    this.#key = key
  }

  get address(): string {
    return this.#key.account.addr.toString()
  }

  async pay(input: ClientPayInput): Promise<ClientPayment> {
    const requirement = input.offered as unknown as AlgorandRequirement
    const amountText = input.describeAmount(requirement.amount, String(requirement.asset))
    refuseAboveMaxUsd(input)
    input.say(`paying ${amountText} (ASA ${requirement.asset}) on ${input.railName} from ${this.address}`)
    const paid = await payAlgorand({
      ...this.#key,
      requirement,
      resourceUrl: input.required.resource?.url ?? requirement.resource ?? input.resourceUrl,
      sha256Hex: await input.file.sha256Hex(),
      sizeBytes: input.file.sizeBytes,
    })
    return { payload: { x402Version: 2, resource: input.required.resource, accepted: input.offered, payload: { txId: paid.txId } }, payer: paid.payer, moved: true }
  }
}

/** The Algorand payer of `source`'s key and node. */
export function algorandClientPayer(source: ClientKeySource): ClientPayer {
  return new AlgorandClientPayer(algorandClientKey(source))
}
