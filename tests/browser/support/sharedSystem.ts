/**
 * globalSetup of vitest's browser project: starts one system (scripts/start.ts, as startSystem does) for every
 * browser file, instead of one per file, and stops it after the last. It does not wait for the start: the unit
 * files run meanwhile (the browser files run after them), and each browser file's `startSystem()` waits for the
 * system through the handoff folder (startSystem.ts). Each file still uses its own wallets and pages; the
 * files run one at a time, so none sees another's requests in flight.
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { describeSharedSystem, sharedSystemFiles, spawnSystem, type System } from './spawnSystem.js'

export default function setup(project: TestProject): () => Promise<void> {
  const handoff = mkdtempSync(join(tmpdir(), 'browser-shared-'))
  const files = sharedSystemFiles(handoff)
  writeFileSync(files.log, '')
  project.provide('browserSharedSystem', handoff)
  const started: Promise<System | undefined> = spawnSystem({ log: files.log }).then(
    (system) => {
      writeFileSync(`${files.ready}.part`, JSON.stringify(describeSharedSystem(system)))
      renameSync(`${files.ready}.part`, files.ready)
      return system
    },
    (error: unknown) => {
      writeFileSync(files.failed, error instanceof Error ? error.message : String(error))
      return undefined
    },
  )
  return async () => {
    await (await started)?.close()
    // A server of the shared system that died mid-run fails every file after it with ECONNREFUSED alone; its
    // output (start.ts reports "<name> exited (<code or signal>)", and the server's last lines before it) is the
    // only account of why, and the handoff folder holding it is removed next.
    const log = readFileSync(files.log, 'utf8')
    if (/\[start\] .* exited \(/.test(log)) process.stderr.write(`a server of the shared browser system exited during the run; its output:\n${log}\n`)
    rmSync(handoff, { recursive: true, force: true })
  }
}
