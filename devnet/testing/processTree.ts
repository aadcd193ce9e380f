/** Test helpers: the descendants of a process (from /proc), and waiting for pids to be gone. */
import { readdirSync, readFileSync } from 'node:fs'

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // pid (comm) state ppid … — comm may contain spaces/parentheses: split after the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(rest[1])
  } catch {
    return undefined
  }
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

export function descendants(root: number): number[] {
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number)
  const children = new Map<number, number[]>()
  for (const p of pids) {
    const pp = parentOf(p)
    if (pp === undefined) continue
    const list = children.get(pp) ?? []
    list.push(p)
    children.set(pp, list)
  }
  const out: number[] = []
  const queue = [root]
  while (queue.length) {
    const p = queue.shift() as number
    for (const c of children.get(p) ?? []) {
      out.push(c)
      queue.push(c)
    }
  }
  return out
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    // a zombie still answers kill(0); treat it as gone
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}

export async function waitGone(pids: number[], timeoutMs = 8_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const left = pids.filter(alive)
    if (left.length === 0 || Date.now() > deadline) return left
    await new Promise((r) => setTimeout(r, 100))
  }
}
