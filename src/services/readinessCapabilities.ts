import type { Env } from '../config/env.js'
import type { Capability } from '../health/CapabilityMonitor.js'
import { readBatchConfig } from '../batch/config.js'
import { readX402Config } from '../x402/config.js'
import type { Services } from './types.js'

/**
 * What `GET /health/ready` checks, each capability by name (docs/configuration.md, "Health and readiness"):
 * - `database`: a read of the database; `catalogue_log`: the append-only log is writable (this replica's disk);
 * - `modelserver`: the model server answers its model list (with several, one that answers is enough);
 * - `storage`: the storage upstream's prices and the Arweave gateway's `/info`; `facilitator`: one of the x402
 *   facilitators answers `/supported` (EVM payments); `algorand`: the Algorand node's status — the three only when
 *   paid storage is configured, otherwise `not_configured`;
 * - `chains`: every JSON-RPC endpoint configured (login, receipt batch, attestation, top-ups, x402 recovery) answers
 *   `eth_chainId`; `not_configured` when none is.
 */
export function readinessCapabilities(services: Services, env: Env, timeoutMs: number): Capability[] {
  const { db, catalogue, modelServer, storage } = services
  const storageOn = storage !== undefined && storage.missingSettings().length === 0
  const storageChecks = storageOn ? storage.healthChecks(timeoutMs) : undefined
  const chains = rpcEndpoints(services, env)
  return [
    { name: 'database', check: () => db.selectFrom('catalogue_events').select('event_id').limit(1).execute() },
    { name: 'catalogue_log', check: () => catalogue.checkWritable() },
    {
      name: 'modelserver',
      check: async () => {
        const result = await modelServer.check()
        if (result.status === 'down') throw new Error(result.detail ?? 'no model server answers')
      },
    },
    {
      name: 'storage',
      check:
        storageChecks &&
        (async () => {
          await Promise.all([storageChecks.storage_upstream!(), storageChecks.arweave_key!(), answers(`${storage.config.gatewayUrl.replace(/\/+$/, '')}/info`, timeoutMs)])
        }),
    },
    { name: 'facilitator', check: storageChecks?.facilitator },
    { name: 'algorand', check: storageChecks?.algod },
    {
      name: 'chains',
      check: chains.length === 0 ? undefined : async () => void (await Promise.all(chains.map((url) => chainAnswers(url, timeoutMs)))),
    },
  ]
}

/** The JSON-RPC endpoints this gateway's configuration uses, each once. */
function rpcEndpoints(services: Services, env: Env): string[] {
  const { config, storage } = services
  const batch = readBatchConfig({ ...env, SERVICE_DATA_DIR: config.dataDir })
  const urls = [
    config.login.rpcUrl,
    batch.enabled ? batch.rpcUrl : undefined,
    storage?.config.attest?.rpcUrl,
    storage?.config.topUp?.rpcUrl,
    ...Object.values(readX402Config(env).evmRpcUrls),
  ]
  return [...new Set(urls.filter((u): u is string => typeof u === 'string' && u !== ''))]
}

/** `fetch`, its failure naming the URL (the operator's log says which dependency). */
async function fetchNamed(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init).catch((error: unknown) => {
    throw new Error(`${url}: ${error instanceof Error ? error.message : String(error)}`)
  })
}

async function answers(url: string, timeoutMs: number): Promise<void> {
  const res = await fetchNamed(url, { signal: AbortSignal.timeout(timeoutMs) })
  await res.arrayBuffer()
  if (!res.ok) throw new Error(`${url} answered ${res.status}`)
}

async function chainAnswers(url: string, timeoutMs: number): Promise<void> {
  const res = await fetchNamed(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const body = (await res.json().catch(() => undefined)) as { result?: unknown } | undefined
  if (!res.ok || typeof body?.result !== 'string') throw new Error(`${url}: no chain id (HTTP ${res.status})`)
}
