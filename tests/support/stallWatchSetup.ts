/**
 * setupFiles entry of both vitest projects: starts the stall watch (stallWatch.ts) once in each fork and in the
 * browser files' thread. A fork keeps its modules from file to file (no isolation), so a global flag, not the module,
 * says whether this process already watches. `VITEST_STALL_LOG` comes from the reporter in vitest's main process.
 */
import { isMainThread } from 'node:worker_threads'
import { relative } from 'node:path'
import { stallThresholdMs, watchStalls } from './stallWatch.js'

const WATCHING = Symbol.for('pay2store.stallWatch')
const log = process.env.VITEST_STALL_LOG
const slot = globalThis as { [WATCHING]?: boolean }
if (log && !slot[WATCHING]) {
  slot[WATCHING] = true
  watchStalls({
    role: isMainThread ? 'fork' : 'thread',
    log,
    thresholdMs: stallThresholdMs(),
    currentFile: () => {
      const file = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath
      return file ? relative(process.cwd(), file) : undefined
    },
  })
}
