/**
 * `npm run batch`: runs the receipt batch now — finishes any batch an earlier run left half-done, then
 * batches every stored, paid upload not yet in a batch (paid before `--cutoff <epoch seconds>`, default
 * now): tree file stored through the storage upstream, `commitBatch` on the configured chain, proofs
 * recorded. Configuration: `SERVICE_BATCH__*` (src/batch/config.ts), `SERVICE_STORAGE__*` for the upstream
 * and Arweave key, `SERVICE_DATABASE_URL` / `SERVICE_DATA_DIR`. Exits non-zero when a step fails. Safe beside the
 * gateways' daily runs: a batch another run is working on is left to it (listed as held by another run).
 *
 * On `npm start`'s data it needs no configuration: unless the peers are configured (SERVICE_X402__FACILITATOR_URL
 * set, as for `npm start`), the settings the devnet wrote in `<SERVICE_DATA_DIR>/devnet.json` are used under the
 * caller's own — the ones `npm start` gave the gateway — so the batch reaches the same chain, upstream, Arweave
 * key and database as the running gateway.
 */
// first: on a Node line engines does not name, say so before a native module crashes the process
import './requireNode.mjs'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Catalogue } from '../src/catalogue/Catalogue.js'
import { createBatchService } from '../src/services/createBatchService.js'
import { readBatchConfig } from '../src/batch/index.js'
import { loadConfig } from '../src/config/loadConfig.js'
import { createDatabase } from '../src/db/createDatabase.js'
import { devnetFileOf, readDevnetEnv, withDevnetEnv } from './start/devnetEnv.js'

const USAGE = `usage: npm run batch [-- --cutoff <epoch seconds>] [--json]

Batches every stored, paid upload not yet in a batch now (paid before --cutoff, default now): stores the tree,
sends commitBatch on the configured chain, records the proofs. On npm start's data it needs no configuration.`

/** The command line; a flag it does not know (or `--help`) prints the usage instead of committing anything. */
function readArgs(): { cutoff: string | undefined; json: boolean } {
  let parsed
  try {
    parsed = parseArgs({ options: { cutoff: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true })
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  if (parsed.values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  return { cutoff: parsed.values.cutoff, json: parsed.values.json === true }
}

/** The environment of the run: the caller's, over `npm start`'s devnet settings when those apply. */
function batchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.SERVICE_X402__FACILITATOR_URL?.trim()) return env
  const dataDir = resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  const devnet = readDevnetEnv(dataDir)
  if (!devnet && !env.SERVICE_DATABASE_URL?.trim() && !existsSync(dataDir)) {
    // nothing to batch: not a gateway's data directory, and no database named
    throw new Error(`no gateway data in ${dataDir}: run it where npm start ran, or name that data with SERVICE_DATA_DIR (or configure SERVICE_DATABASE_URL and the peers)`)
  }
  if (!devnet) return env
  console.error(`using the devnet's settings from ${devnetFileOf(dataDir)} (npm start)`)
  return withDevnetEnv(devnet, { SERVICE_DATA_DIR: dataDir, SERVICE_PROFILE: 'devnet' }, env)
}

async function main(): Promise<void> {
  const { cutoff: cutoffText, json } = readArgs()
  if (cutoffText !== undefined && !/^\d+$/.test(cutoffText)) throw new Error('--cutoff must be epoch seconds')
  const env = batchEnv(process.env)
  const batchConfig = readBatchConfig(env)
  const { databaseUrl, catalogueLogPath } = loadConfig(env)
  const handle = await createDatabase({ url: databaseUrl })
  try {
    const service = createBatchService(batchConfig, {
      db: handle.db,
      env,
      // the gateway's catalogue (its log and index): a batch committed here is told as the gateway's own are
      events: new Catalogue({ db: handle.db, logPath: catalogueLogPath }),
      log: {
        info: (o, m) => console.error(m ?? '', JSON.stringify(o)),
        warn: (o, m) => console.error(`warning: ${m ?? ''}`, JSON.stringify(o)),
        error: (o, m) => console.error(`error: ${m ?? ''}`, JSON.stringify(o)),
      },
    })
    const result = await service.runOnce({ cutoff: cutoffText === undefined ? undefined : Number(cutoffText) })
    const batches = [...result.resumed, ...result.created]
    if (json) {
      console.log(JSON.stringify(result, null, 2))
    } else if (batches.length === 0 && result.inProgress.length === 0) {
      console.log('no receipts to batch')
    } else {
      for (const b of batches) {
        console.log(
          `epoch ${b.epoch ?? '-'} · ${b.leafCount} receipt${b.leafCount === 1 ? '' : 's'} · root ${b.root} · tree ${b.treeArTxId} · tx ${b.commitTxHash} · ${b.status}`,
        )
      }
    }
    if (!json) {
      for (const b of result.inProgress) console.log(`root ${b.root} · ${b.leafCount} receipt${b.leafCount === 1 ? '' : 's'} · ${b.status} · held by another run, left to it`)
    }
    for (const s of result.skipped) console.error(`left out ${s.arTxId}: ${s.reason}`)
  } finally {
    await handle.close()
  }
}

main().catch((err: unknown) => {
  const e = err as { shortMessage?: string; message?: string }
  console.error(`batch failed: ${e.shortMessage ?? e.message ?? String(err)}`)
  process.exit(1)
})
