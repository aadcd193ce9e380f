/**
 * `npm run devnet`: starts every devnet peer on docs/design.md's ports, writes
 * `<SERVICE_DATA_DIR>/devnet.json` (default `./data`) and prints one table. SIGINT/SIGTERM stop everything
 * (Anvil children included). Environment: SERVICE_DATA_DIR, DEVNET_BLOCK_INTERVAL_MS, DEVNET_ROUND_INTERVAL_MS,
 * DEVNET_PORT_OFFSET (every default port shifted by it), DEVNET_FREE_PORTS=1 (every peer on a free port).
 */
import { resolve } from 'node:path'
import { devnetPortsFromEnv } from './ports.js'
import { devnetTable } from './devnetTable.js'
import { startDevnet } from './startDevnet.js'
import { watchAncestors } from './watchAncestors.js'

const t0 = Date.now()
const dataDir = resolve(process.env.SERVICE_DATA_DIR?.trim() || 'data')
const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined)

const devnet = await startDevnet({
  dataDir,
  ports: devnetPortsFromEnv(process.env),
  blockIntervalMs: num(process.env.DEVNET_BLOCK_INTERVAL_MS),
  deployContracts: process.env.DEVNET_CONTRACTS !== '0',
  roundIntervalMs: num(process.env.DEVNET_ROUND_INTERVAL_MS),
  log: (l) => console.log(`[devnet] ${l}`),
}).catch((e: unknown) => {
  console.error(`[devnet] failed to start: ${(e as Error).message}`)
  process.exit(1)
})

console.log(devnetTable(devnet.info))
console.log(`[devnet] wrote ${devnet.file}; up in ${Date.now() - t0} ms. Ctrl-C stops everything.`)
process.send?.({ type: 'devnet-ready', file: devnet.file })

let stopping = false
const stop = (signal: string) => {
  if (stopping) return
  stopping = true
  console.log(`[devnet] ${signal}: stopping`)
  const force = setTimeout(() => process.exit(1), 5_000)
  force.unref()
  void devnet.close().then(() => {
    console.log('[devnet] stopped')
    process.exit(0)
  })
}
process.on('SIGINT', () => stop('SIGINT'))
process.on('SIGTERM', () => stop('SIGTERM'))
process.on('SIGHUP', () => stop('SIGHUP'))
// `npm run devnet` + SIGTERM to npm kills npm's `sh` but not tsx or us: stop when a launcher disappears.
watchAncestors((why) => stop(why))
