import { getDefaultAsset } from '@x402/evm'
import { ConfigError } from '../config/ConfigError.js'
import { type Env, envInt, envOptionalString, envString } from '../config/env.js'
import { envSuffix, EVM_NETWORKS } from './networks.js'
import { type AlgoUsdRate, parseAlgoUsdRate } from './rails/algorand/nativeAlgoAmount.js'

/**
 * Configuration of the payment rails (seed 4.6 step 4), from `SERVICE_X402__*`, `SERVICE_ALGOD__*` and
 * `FACILITATOR_TOKEN`:
 * - `SERVICE_X402__FACILITATOR_URL`, `FACILITATOR_TOKEN` (bearer on `/verify` and `/settle`);
 *   `SERVICE_X402__FALLBACK_FACILITATOR_URL`: fallback facilitators, comma-separated, tried in order when the
 *   one before fails for transport reasons (same token);
 * - `SERVICE_X402__PAY_TO_EVM`, `SERVICE_X402__ASSET__<NETWORK>` for each network of networks.ts
 *   (`EIP155_8453`, `EIP155_1`; default: the network's canonical USDC, from @x402/evm's table of the assets stock clients pay by default);
 *   `SERVICE_X402__TOKEN_NAME` / `SERVICE_X402__TOKEN_VERSION`: the token's EIP-712 domain (`USD Coin` / `2`);
 * - `SERVICE_X402__PAY_TO_ALGORAND`, `SERVICE_ALGOD__URL`, `SERVICE_ALGOD__TOKEN`;
 *   `SERVICE_ALGOD__GENESIS_HASH` (base64, as algod reports it; fetched from the node when unset);
 *   `SERVICE_ALGOD__POLL_INTERVAL_MS` (1500), `SERVICE_ALGOD__TIMEOUT_MS` (30000);
 *   `SERVICE_X402__ALGO_USD_RATE`: USD per ALGO (e.g. `0.18`); native ALGO payments count only through it
 *   (unset, the default: native payments are refused and only the USDC ASA is accepted);
 * - `SERVICE_X402__MAX_TIMEOUT_SECONDS` (60);
 * - `SERVICE_X402__UPTO_FACILITATOR_ADDRESS`: the address the facilitator settles x402 `upto` payments from (its
 *   `/supported` lists it as `extra.facilitatorAddress`); a permit must name it. Unset: `upto` is not offered.
 */
export type X402Config = {
  facilitatorUrl: string
  /** Fallbacks, in order (seed: `{fallback_facilitator_url}`). */
  fallbackFacilitatorUrls: string[]
  facilitatorToken: string
  payToEvm: string
  /** Token of each EVM network of networks.ts, by CAIP-2 id. */
  assets: Record<string, string>
  tokenName: string
  tokenVersion: string
  payToAlgorand: string
  algodUrl: string
  algodToken: string
  algodGenesisHash: string | undefined
  algodPollIntervalMs: number
  algodTimeoutMs: number
  /** Operator-set ALGO price; undefined: native ALGO is refused (see nativeAlgoAmount.ts). */
  algoUsdRate: AlgoUsdRate | undefined
  maxTimeoutSeconds: number
  /** '' when unset (then no `upto` rail is ready). */
  uptoFacilitatorAddress: string
  /**
   * JSON-RPC of each EVM rail (`SERVICE_X402__RPC_URL__EIP155_8453`, `__EIP155_1`; optional): with it, a payment
   * an instance died settling is recovered from the chain (docs/reliability.md).
   */
  evmRpcUrls: Partial<Record<string, string>>
}

export function readX402Config(env: Env = process.env): X402Config {
  const s = (name: string, fallback = '') => envString(env, name, fallback)
  const positive = (name: string, fallback: number) => envInt(env, name, fallback, { min: 1, max: Number.MAX_SAFE_INTEGER })
  return {
    facilitatorUrl: s('SERVICE_X402__FACILITATOR_URL', 'http://127.0.0.1:8402'),
    fallbackFacilitatorUrls: s('SERVICE_X402__FALLBACK_FACILITATOR_URL')
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '')
      .map((u) => {
        if (!/^https?:\/\/[^\s/]+/.test(u)) throw new ConfigError('SERVICE_X402__FALLBACK_FACILITATOR_URL', `not an http(s) URL: ${u}`)
        return u
      }),
    facilitatorToken: s('FACILITATOR_TOKEN'),
    payToEvm: s('SERVICE_X402__PAY_TO_EVM'),
    assets: Object.fromEntries(EVM_NETWORKS.map((n) => [n.network, s(`SERVICE_X402__ASSET__${envSuffix(n.network)}`, defaultUsdc(n.network))])),
    tokenName: s('SERVICE_X402__TOKEN_NAME', 'USD Coin'),
    tokenVersion: s('SERVICE_X402__TOKEN_VERSION', '2'),
    payToAlgorand: s('SERVICE_X402__PAY_TO_ALGORAND'),
    algodUrl: s('SERVICE_ALGOD__URL', 'http://127.0.0.1:8405'),
    algodToken: s('SERVICE_ALGOD__TOKEN'),
    algodGenesisHash: envOptionalString(env, 'SERVICE_ALGOD__GENESIS_HASH'),
    algodPollIntervalMs: positive('SERVICE_ALGOD__POLL_INTERVAL_MS', 1_500),
    algodTimeoutMs: positive('SERVICE_ALGOD__TIMEOUT_MS', 30_000),
    algoUsdRate: parseAlgoUsdRate(envOptionalString(env, 'SERVICE_X402__ALGO_USD_RATE')),
    maxTimeoutSeconds: positive('SERVICE_X402__MAX_TIMEOUT_SECONDS', 60),
    uptoFacilitatorAddress: evmAddress(s('SERVICE_X402__UPTO_FACILITATOR_ADDRESS'), 'SERVICE_X402__UPTO_FACILITATOR_ADDRESS'),
    evmRpcUrls: Object.fromEntries(
      EVM_NETWORKS.flatMap(({ network }) => {
        const url = envOptionalString(env, `SERVICE_X402__RPC_URL__${envSuffix(network)}`)
        return url ? [[network, url]] : []
      }),
    ),
  }
}

function evmAddress(value: string, name: string): string {
  if (value !== '' && !/^0x[0-9a-fA-F]{40}$/.test(value)) throw new ConfigError(name, 'not a 0x EVM address')
  return value
}

/** The network's canonical USDC from @x402/evm's table (what stock clients pay by default); '' when it has none. */
function defaultUsdc(network: string): string {
  try {
    return getDefaultAsset(network as `${string}:${string}`, 'USDC').asset
  } catch {
    return ''
  }
}
