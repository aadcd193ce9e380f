import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'

const ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The instance's identity, stable across restarts so a restarted instance recognises its own in-flight work:
 * `SERVICE_INSTANCE_ID` when set, else the id kept in `<dataDir>/instance-id` (generated on first start as
 * `<hostname>-<random>`). Two instances must never share a data dir — or an id.
 */
export function resolveInstanceId(configured: string | undefined, dataDir: string): string {
  if (configured) return configured
  const file = join(dataDir, 'instance-id')
  try {
    const kept = readFileSync(file, 'utf8').trim()
    if (ID.test(kept)) return kept
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '-').slice(0, 64) || 'gateway'
  const id = `${host}-${randomBytes(6).toString('hex')}`
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${id}\n`)
  return id
}
