/**
 * Which processes may hold a data directory's lock, read from Linux's /proc (elsewhere each answer is the
 * portable one): whether a pid still runs `npm start` or the gateway (a pid the system reused for something else
 * does not), and the parent of a pid. Best effort: a process of another user may be unreadable, and then less is
 * said, never something wrong.
 */
import { readFileSync } from 'node:fs'

/** What marks `npm start` (scripts/start.ts, through tsx or from a build). */
export const START_SCRIPT = /(^|\/)scripts\/start\.(ts|js)$/
/** What marks the gateway (`npm run serve`: dist/src/main.js; through tsx: src/main.ts). */
const GATEWAY_MAIN = /(^|\/)src\/main\.(ts|js)$/

export function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  } catch {
    return undefined
  }
}

/** The parent of `pid`, from /proc; undefined where that is unreadable. */
export function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Whether `pid` is alive; on Linux also that its command line matches `program`. */
function runs(pid: number, program: RegExp): boolean {
  if (!isAlive(pid)) return false
  const args = commandLine(pid)
  return args === undefined ? process.platform !== 'linux' : args.some((a) => program.test(a))
}

/** Whether `pid` is a running `npm start`. */
export const isRunningStart = (pid: number): boolean => runs(pid, START_SCRIPT)

/** Whether `pid` is a running `npm start` or gateway: a holder of a data directory's lock. */
export const isRunningHolder = (pid: number): boolean => runs(pid, START_SCRIPT) || runs(pid, GATEWAY_MAIN)

/** Whether `pid` is this process's parent or one further up (a few levels: npm start → its gateway). */
export function isAncestor(pid: number): boolean {
  let p: number | undefined = process.ppid
  for (let depth = 0; p !== undefined && p > 1 && depth < 4; p = ppidOf(p), depth++) {
    if (p === pid) return true
  }
  return false
}
