/**
 * The gateway's claim on its data directory (src/main.ts, before it opens the database): refused, with who holds
 * it, while `npm start` or another gateway runs on it — two processes would write one SQLite database, one vault
 * and one catalogue log. The gateway `npm start` itself runs is its child and works under its lock. A lock left by a
 * process that no longer runs is taken over.
 */
import { readDataDirLock, takeDataDirLock, updateDataDirLock } from './dataDirLock.js'
import { heldSentence, portLine } from './describeHolder.js'
import { isAncestor, isRunningStart } from './lockHolders.js'

/** Takes `dataDir` for this gateway; the lines of the refusal when another process holds it. */
export function holdDataDir(dataDir: string): string[] | undefined {
  const current = readDataDirLock(dataDir)
  if (current && current.program !== 'gateway' && isAncestor(current.pid) && isRunningStart(current.pid)) return undefined
  const lock = takeDataDirLock(dataDir, 'gateway', [])
  if (lock.taken) return undefined
  const { holder } = lock
  return [
    heldSentence(holder),
    ...holder.ports.map(portLine),
    `Two processes on one data directory would write one database and one vault. Use that one, stop it first (kill ${holder.pid}), or give this gateway its own data directory (SERVICE_DATA_DIR) and port (SERVICE_PORT).`,
  ]
}

/** Records the port this gateway listens on in its lock (nothing when npm start holds the directory). */
export function recordGatewayPort(dataDir: string, port: number, url: string): void {
  updateDataDirLock(dataDir, [{ port, service: 'the gateway', url }])
}
