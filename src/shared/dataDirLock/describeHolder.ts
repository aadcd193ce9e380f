/**
 * What a process refused a data directory says about the one holding it (`npm start` and the gateway say the
 * same): who, which pid, since when, and what it serves. Plain sentences; the caller wraps them to its width.
 */
import type { DataDirLock, ListenedPort } from './dataDirLock.js'

const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8)

export const holderName = (holder: DataDirLock) => (holder.program === 'gateway' ? 'a gateway (npm run serve)' : 'npm start')

/** "npm start is already running on this data directory (…): pid 4242, up since 10:00:00. It serves:" */
export function heldSentence(holder: DataDirLock): string {
  const serves = holder.ports.length > 0 ? ' It serves:' : ''
  return `${holderName(holder)} is already running on this data directory (${holder.dataDir}): pid ${holder.pid}, up since ${clock(holder.startedAt)}.${serves}`
}

export const portLine = (p: ListenedPort) => `  ${String(p.port).padEnd(6)} ${p.service}${p.url ? ` ${p.url}` : ''}`
