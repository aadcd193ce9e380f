import { isAbsolute, resolve } from 'node:path'
import { type Address, type Hex, getAddress, isAddress } from 'viem'
import { ConfigError } from '../config/ConfigError.js'
import { type Env, envBool, envHttpUrl, envInt, envOptionalString, envString } from '../config/env.js'
import { deployedAddressSync } from './chain.js'

/**
 * Configuration of the daily receipt batch, from `SERVICE_BATCH__*`:
 * - `SERVICE_BATCH__ENABLED` — run the daily schedule inside the gateway (default: on when an attestor
 *   key is set);
 * - `SERVICE_BATCH__DAILY_AT` — `HH:MM` UTC of the daily run (default `00:10`);
 * - `SERVICE_BATCH__RPC_URL` — the chain holding ReceiptBatches (default `http://127.0.0.1:8545`, the
 *   devnet's chain 8453);
 * - `SERVICE_BATCH__ATTESTOR_KEY` — key of an address with `ATTESTOR_ROLE` (never logged);
 * - `SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS` — the contract; default: `receiptBatches` of
 *   `<SERVICE_DATA_DIR>/contracts-<chainId>.json`, written by `contracts/deploy.ts`;
 * - `SERVICE_BATCH__MAX_LEAVES` — most receipts per batch (default 10000);
 * - `SERVICE_BATCH__APP_NAME` — `App-Name` tag of the tree file (default `pay2store-gateway`).
 */
export type BatchConfig = {
  enabled: boolean
  dailyAt: string
  rpcUrl: string
  attestorKey: Hex | undefined
  receiptBatchesAddress: Address | undefined
  maxLeaves: number
  appName: string
  dataDir: string
}

export function readBatchConfig(env: Env = process.env): BatchConfig {
  const dataDirRaw = envString(env, 'SERVICE_DATA_DIR', './data')
  const attestorKey = envOptionalString(env, 'SERVICE_BATCH__ATTESTOR_KEY')
  if (attestorKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(attestorKey)) {
    throw new ConfigError('SERVICE_BATCH__ATTESTOR_KEY', 'must be a 0x-prefixed 32-byte hex key')
  }
  const address = envOptionalString(env, 'SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS')
  if (address !== undefined && !isAddress(address, { strict: false })) {
    throw new ConfigError('SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS', `must be an address (got "${address}")`)
  }
  const dailyAt = envString(env, 'SERVICE_BATCH__DAILY_AT', '00:10')
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(dailyAt)) {
    throw new ConfigError('SERVICE_BATCH__DAILY_AT', `must be HH:MM in UTC (got "${dailyAt}")`)
  }
  return {
    enabled: envBool(env, 'SERVICE_BATCH__ENABLED', attestorKey !== undefined),
    dailyAt,
    rpcUrl: envHttpUrl(env, 'SERVICE_BATCH__RPC_URL', 'http://127.0.0.1:8545'),
    attestorKey: attestorKey as Hex | undefined,
    receiptBatchesAddress: address ? getAddress(address) : undefined,
    maxLeaves: envInt(env, 'SERVICE_BATCH__MAX_LEAVES', 10_000, { min: 1, max: 1_000_000 }),
    appName: envString(env, 'SERVICE_BATCH__APP_NAME', 'pay2store-gateway'),
    dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(dataDirRaw),
  }
}

/** The ReceiptBatches address: configured, else from the deployment file of `chainId`. */
export function resolveReceiptBatchesAddress(config: BatchConfig, chainId: number): Address {
  return config.receiptBatchesAddress ?? deployedAddressSync(config.dataDir, chainId, 'receiptBatches', 'SERVICE_BATCH__RECEIPT_BATCHES_ADDRESS')
}
