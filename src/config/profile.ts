import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type Env, envBool, envEnum, envOptionalString } from './env.js'

/**
 * What a start is for. `devnet`: against the local peers of `devnet/` (`npm start` chooses it), where every
 * address left unset falls back to the devnet's loopback port. `production` (the default): no setting falls
 * back to a devnet address — a start that would is refused, naming the settings to set.
 */
export type Profile = 'devnet' | 'production'

export const PROFILES: readonly Profile[] = ['devnet', 'production']

/** `SERVICE_PROFILE`; unset is `production`, so a deployment never runs on the devnet's defaults by omission. */
export function readProfile(env: Env): Profile {
  return envEnum(env, 'SERVICE_PROFILE', PROFILES, 'production')
}

/** A setting a production start needs and does not have, with what it is for. */
export type MissingSetting = { name: string; why: string }

type Requirement = {
  /** When the capability is on (an operator turns a capability on by setting any of its settings). */
  on: (env: Env) => boolean
  settings: readonly MissingSetting[]
}

const set = (env: Env, name: string) => envOptionalString(env, name) !== undefined

/**
 * Paid storage and its payment rails: every setting below either has a devnet default (a loopback address) or,
 * unset, leaves `POST /store` answering 503. Setting any of them turns the capability on; then all are needed.
 */
const PAID_STORAGE: readonly MissingSetting[] = [
  { name: 'SERVICE_X402__PAY_TO_EVM', why: 'the address that receives EVM payments' },
  { name: 'SERVICE_X402__PAY_TO_ALGORAND', why: 'the address that receives Algorand payments' },
  { name: 'SERVICE_X402__FACILITATOR_URL', why: 'the x402 facilitator that verifies and settles EVM payments (devnet: http://127.0.0.1:8402)' },
  { name: 'FACILITATOR_TOKEN', why: "the facilitator's bearer credential" },
  { name: 'SERVICE_ALGOD__URL', why: 'the Algorand node that confirms Algorand payments (devnet: http://127.0.0.1:8405)' },
  { name: 'SERVICE_STORAGE__PAYMENT_URL', why: "the storage upstream's payment service (devnet: http://127.0.0.1:8403)" },
  { name: 'SERVICE_STORAGE__UPLOAD_URL', why: "the storage upstream's upload service (devnet: http://127.0.0.1:8403)" },
  { name: 'SERVICE_STORAGE__GATEWAY_URL', why: 'the Arweave gateway uploads are verified on (devnet: http://127.0.0.1:8404)' },
]

/**
 * Every setting a production start needs, by capability. Always: where state is kept, the public origin and
 * the model server. The rest only when the capability is on (paid storage, attestation, top-ups, the receipt
 * batch); a capability left entirely unset is off — `GET /health/ready` reports it `not_configured`.
 * `tests/operators/productionProfile.test.ts` checks that no configuration reader falls back to a loopback
 * address once these are set, so a new devnet default cannot slip past this list.
 */
const REQUIREMENTS: readonly Requirement[] = [
  {
    on: () => true,
    settings: [
      { name: 'SERVICE_DATA_DIR', why: "the directory this gateway keeps its state in (npm start keeps the devnet's in ./data)" },
      { name: 'SERVICE_PUBLIC_ORIGIN', why: 'the origin users reach the gateway at (e.g. https://pay.example.com): sign-in messages and payment resources name it' },
      { name: 'SERVICE_LLM__MODELSERVER__BASE_URL', why: 'the model server, or several comma-separated (devnet: http://127.0.0.1:11434)' },
    ],
  },
  { on: (env) => PAID_STORAGE.some((s) => set(env, s.name)), settings: PAID_STORAGE },
  {
    on: (env) => set(env, 'SERVICE_STORAGE__ATTESTOR_KEY'),
    settings: [{ name: 'SERVICE_STORAGE__ATTEST_RPC_URL', why: 'the chain StorageAttest is on, for SERVICE_STORAGE__ATTESTOR_KEY (devnet: http://127.0.0.1:8545)' }],
  },
  {
    on: (env) => set(env, 'SERVICE_STORAGE__TOPUP_KEY'),
    settings: [{ name: 'SERVICE_STORAGE__TOPUP_RPC_URL', why: 'the chain upstream top-ups are paid on, for SERVICE_STORAGE__TOPUP_KEY (devnet: http://127.0.0.1:8545)' }],
  },
  {
    on: (env) => set(env, 'SERVICE_BATCH__ATTESTOR_KEY') || batchEnabled(env),
    settings: [{ name: 'SERVICE_BATCH__RPC_URL', why: 'the chain receipt batches are committed to (devnet: http://127.0.0.1:8545)' }],
  },
]

function batchEnabled(env: Env): boolean {
  try {
    return envBool(env, 'SERVICE_BATCH__ENABLED', false)
  } catch {
    return false // a bad value is refused by the batch's own configuration, naming it
  }
}

/** The settings a production start lacks (empty: it may start), each once, in the order of the table above. */
export function missingProductionSettings(env: Env): MissingSetting[] {
  const missing = new Map<string, MissingSetting>()
  for (const requirement of REQUIREMENTS) {
    if (!requirement.on(env)) continue
    for (const setting of requirement.settings) if (!set(env, setting.name) && !missing.has(setting.name)) missing.set(setting.name, setting)
  }
  return [...missing.values()]
}

/**
 * Why a production gateway may not use `dataDir`: it holds a devnet's state (`devnet.json`, the devnet's keys),
 * so it is `npm start`'s. `undefined` when it does not.
 */
export function devnetStateIn(dataDir: string): string | undefined {
  for (const entry of ['devnet.json', 'devnet']) {
    if (existsSync(join(dataDir, entry))) return `${dataDir} holds a devnet's state (${entry}): a production gateway keeps its own data directory`
  }
  return undefined
}

/**
 * The refusal a production start prints (one line per missing setting), or `undefined` when it may start.
 * `dataDir` is the resolved data directory (checked only once SERVICE_DATA_DIR is set).
 */
export function productionStartRefusal(env: Env, dataDir: string): string | undefined {
  const missing = missingProductionSettings(env)
  const devnetState = missing.some((m) => m.name === 'SERVICE_DATA_DIR') ? undefined : devnetStateIn(dataDir)
  if (missing.length === 0 && devnetState === undefined) return undefined
  const lines = ['The gateway will not start: a production start (SERVICE_PROFILE unset or "production") never falls back to the devnet\'s local addresses.']
  if (missing.length > 0) {
    lines.push('Set these settings:')
    for (const m of missing) lines.push(`  ${m.name} — ${m.why}`)
  }
  if (devnetState) lines.push(`SERVICE_DATA_DIR: ${devnetState}.`)
  lines.push('A minimal production configuration is in docs/configuration.md. To run against the local devnet instead, set SERVICE_PROFILE=devnet (npm start does).')
  return lines.join('\n')
}
