import { existsSync, readFileSync, statSync } from 'node:fs'
import { inject } from 'vitest'
import { sharedSystemFiles, spawnSystem, type SharedSystemInfo, type StartSystemParameters, type System } from './spawnSystem.js'

export { freePort, spawnSystem, type StartSystemParameters, type System } from './spawnSystem.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder through which sharedSystem.ts (the browser project's globalSetup) hands its system to the files. */
    browserSharedSystem?: string
  }
}

/**
 * The whole system exactly as `npm start` runs it (scripts/start.ts as a child process: devnet peers in-process,
 * model server and gateway as its children), every port free, a fresh data dir. Resolves once start.ts reports
 * "up"; `close()` sends SIGTERM (start.ts stops its children and the devnet) and removes the data dir.
 *
 * Called without parameters inside the browser project, it returns the one system that project's globalSetup
 * (sharedSystem.ts) started for all its files instead of starting another (each start is a devnet, a model
 * server and a gateway: ~half a minute of both cores); `close()` then leaves it running and `output()` holds
 * what it printed since this file attached. Files that need other settings (`env`, `contracts`) get their own.
 */
export async function startSystem(p: StartSystemParameters = {}): Promise<System> {
  const handoff = p.env === undefined && p.contracts === undefined ? sharedHandoff() : undefined
  return handoff ? attachSharedSystem(handoff) : spawnSystem(p)
}

function sharedHandoff(): string | undefined {
  try {
    return inject('browserSharedSystem')
  } catch {
    return undefined // not inside a vitest worker (a script reusing the harness)
  }
}

async function attachSharedSystem(handoff: string): Promise<System> {
  const files = sharedSystemFiles(handoff)
  const t0 = Date.now()
  while (!existsSync(files.ready)) {
    if (existsSync(files.failed)) throw new Error(`the shared browser system did not start:\n${readFileSync(files.failed, 'utf8')}`)
    if (Date.now() - t0 > 200_000) throw new Error(`the shared browser system did not come up in 200 s (${handoff})`)
    await new Promise((r) => setTimeout(r, 200))
  }
  const info = JSON.parse(readFileSync(files.ready, 'utf8')) as SharedSystemInfo
  const from = existsSync(files.log) ? statSync(files.log).size : 0
  return {
    ...info,
    output: () => readFileSync(files.log).subarray(from).toString(),
    close: async () => undefined, // the globalSetup's teardown stops it after the last file
  }
}

