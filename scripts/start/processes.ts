/**
 * What `npm start` says about other processes, read from Linux's /proc (elsewhere each answer is "unknown"):
 * whether a pid is a running `npm start`, which process listens on a TCP port, and the `npm start` it belongs
 * to. Best effort: a process of another user may be unreadable, and then less is said, never something wrong.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { commandLine, ppidOf, START_SCRIPT } from '../../src/shared/dataDirLock/lockHolders.js'

export { isRunningStart } from '../../src/shared/dataDirLock/lockHolders.js'

/** The `npm start` among `pid` and its ancestors, if any. */
export function startOwning(pid: number): number | undefined {
  for (let p: number | undefined = pid, depth = 0; p !== undefined && p > 1 && depth < 8; p = ppidOf(p), depth++) {
    if (commandLine(p)?.some((a) => START_SCRIPT.test(a))) return p
  }
  return undefined
}

/** Socket inodes listening on `port` (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/)
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is column 10
      if (cols.length > 9 && cols[3] === '0A' && Number.parseInt(cols[1]!.split(':')[1]!, 16) === port) inodes.add(cols[9]!)
    }
  }
  return inodes
}

/** The process listening on `port`, with its command line, when /proc says. */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  const inodes = listeningInodes(port)
  if (inodes.size === 0) return undefined
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return undefined
  }
  for (const pid of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      let target: string
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`)
      } catch {
        continue
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1]
      if (inode && inodes.has(inode)) return { pid: Number(pid), command: (commandLine(Number(pid)) ?? []).join(' ') }
    }
  }
  return undefined
}
