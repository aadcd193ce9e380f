/**
 * Before `npm start` starts anything: is another `npm start` running on this data directory, and is every port
 * it needs free? Each refusal says what runs where and what to do, in lines that fit 80 columns.
 */
import { createServer } from 'node:net'
import { wrapText } from '../../src/cli/wrapText.js'
import type { PlannedPort } from './plan.js'
import { portHolder, startOwning } from './processes.js'
import type { DataDirLock } from '../../src/shared/dataDirLock/dataDirLock.js'
import { heldSentence, portLine } from '../../src/shared/dataDirLock/describeHolder.js'

/** Columns left for text after `npm start`'s `[start] ` prefix. */
const WIDTH = 80 - '[start] '.length

export type TakenPort = PlannedPort & { reason: string; holder?: { pid: number; command: string }; start?: number }

/** Why `port` cannot be listened on at `host` (`EADDRINUSE`, `EACCES`, …), or undefined when it can. */
function refusal(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)))
  })
}

/** The planned ports that cannot be listened on, each with who holds it when that can be found. */
export async function takenPorts(ports: PlannedPort[]): Promise<TakenPort[]> {
  const refused = await Promise.all(ports.map(async (p) => ({ ...p, reason: await refusal(p.port, p.host) })))
  return refused
    .filter((p): p is PlannedPort & { reason: string } => p.reason !== undefined)
    .map((p) => {
      const holder = p.reason === 'EADDRINUSE' ? portHolder(p.port) : undefined
      return { ...p, holder, start: holder ? startOwning(holder.pid) : undefined }
    })
}

const shorten = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** What a second `npm start` on the same data directory (held by `npm start` or a gateway on its own) says. */
export function alreadyRunning(holder: DataDirLock): string[] {
  return [
    ...wrapText(heldSentence(holder), WIDTH),
    ...holder.ports.map(portLine),
    ...wrapText(`Use that one, or stop it first (Ctrl-C in its terminal, or kill ${holder.pid}). Another beside it needs its own data directory and ports, e.g. SERVICE_DATA_DIR=data2 SERVICE_PORT=8100 MODELSERVER_PORT=11534 DEVNET_PORT_OFFSET=100 npm start`, WIDTH),
  ]
}

const REASONS = new Map([
  ['EADDRINUSE', 'in use'],
  ['EACCES', 'not allowed to this user'],
  ['EADDRNOTAVAIL', 'on an address this machine does not have'],
])

/** What `npm start` says when ports it needs are taken. */
export function portsTaken(taken: TakenPort[]): string[] {
  const lines = [`cannot start: ${taken.length === 1 ? 'a port it needs is' : `${taken.length} ports it needs are`} not free`]
  for (const p of taken) {
    const by = p.start !== undefined ? `npm start (pid ${p.start})` : p.holder ? `pid ${p.holder.pid}: ${shorten(p.holder.command, 50)}` : undefined
    // the system's code too (EADDRINUSE, …): what a search, or a script retrying on other ports, looks for
    lines.push(portLine(p), ...wrapText(`${REASONS.has(p.reason) ? `${REASONS.get(p.reason)} (${p.reason})` : p.reason}${by ? ` by ${by}` : ''}`, WIDTH, '         '))
  }
  const settings = [...new Set(taken.map((p) => p.setting))]
  lines.push(...wrapText(`Stop what holds ${taken.length === 1 ? 'it' : 'them'}, or move this npm start: ${settings.map((s) => SETTING_HINTS.get(s) ?? s).join('; ')}.`, WIDTH))
  return lines
}

const SETTING_HINTS = new Map([
  ['SERVICE_PORT', 'SERVICE_PORT=<port> for the gateway'],
  ['MODELSERVER_PORT', 'MODELSERVER_PORT=<port> for the model server'],
  ['DEVNET_PORT_OFFSET', 'DEVNET_PORT_OFFSET=<n> shifts every devnet port by n'],
])
