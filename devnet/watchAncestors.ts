/**
 * Calls `onGone` when a process that launched us goes away (Linux /proc). Wrappers such as `npm run` → `sh -c`
 * → `tsx` do not always pass a signal on (SIGTERM to npm kills `sh`, leaving `tsx` and us orphaned), so the
 * devnet and `npm start` watch their ancestors and stop themselves instead of lingering.
 */
import { ppidOf } from '../src/shared/dataDirLock/lockHolders.js'

export function watchAncestors(onGone: (why: string) => void, opts: { depth?: number; intervalMs?: number } = {}): () => void {
  const chain: { pid: number; ppid: number }[] = []
  let pid = process.pid
  for (let i = 0; i < (opts.depth ?? 4); i++) {
    const ppid = ppidOf(pid)
    if (ppid === undefined || ppid <= 1) break
    chain.push({ pid, ppid })
    pid = ppid
  }
  if (chain.length === 0) return () => undefined
  const timer = setInterval(() => {
    for (const link of chain) {
      const now = ppidOf(link.pid)
      if (now !== link.ppid) {
        clearInterval(timer)
        onGone(`parent process ${link.ppid} of ${link.pid} is gone`)
        return
      }
    }
  }, opts.intervalMs ?? 1_000)
  timer.unref()
  return () => clearInterval(timer)
}
