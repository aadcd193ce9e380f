import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'

export type StoreReport = {
  /** Manifest files, relative to `manifests/` (`host/namespace/model/tag`). */
  manifests: string[]
  /** What is wrong: unreadable or torn manifests, missing or corrupt blobs, stray temporary files. */
  problems: string[]
  /** Files left in `tmp/`. */
  temporaryFiles: string[]
}

/**
 * Reads a models directory as a client of the store never does: every manifest must parse as a schema 2 manifest,
 * every blob it references must be present with its size and its sha256, and no temporary file may be left (in
 * `tmp/` or next to a manifest).
 */
export async function inspectModelStore(modelsDir: string): Promise<StoreReport> {
  const manifestsDir = path.join(modelsDir, 'manifests')
  const report: StoreReport = { manifests: [], problems: [], temporaryFiles: [] }
  const verified = new Map<string, string | undefined>()
  for (const file of await walk(manifestsDir)) {
    const rel = path.relative(manifestsDir, file)
    if (rel.split(path.sep).length !== 4 || /\.tmp|partial-/.test(rel)) {
      report.problems.push(`stray file in manifests/: ${rel}`)
      continue
    }
    report.manifests.push(rel)
    let manifest: { schemaVersion?: number; config?: Descriptor; layers?: Descriptor[] }
    try {
      manifest = JSON.parse(await readFile(file, 'utf8')) as typeof manifest
    } catch {
      report.problems.push(`${rel}: not JSON (torn write?)`)
      continue
    }
    if (manifest.schemaVersion !== 2 || !manifest.config || !Array.isArray(manifest.layers)) {
      report.problems.push(`${rel}: not a schema 2 manifest`)
      continue
    }
    for (const d of [manifest.config, ...manifest.layers]) {
      if (!verified.has(d.digest)) verified.set(d.digest, await verifyBlob(modelsDir, d))
      const problem = verified.get(d.digest)
      if (problem) report.problems.push(`${rel}: ${problem}`)
    }
  }
  report.temporaryFiles = await readdir(path.join(modelsDir, 'tmp')).catch(() => [])
  return report
}

type Descriptor = { digest: string; size: number }

async function verifyBlob(modelsDir: string, d: Descriptor): Promise<string | undefined> {
  const file = path.join(modelsDir, 'blobs', d.digest.replace(':', '-'))
  const st = await stat(file).catch(() => undefined)
  if (!st) return `blob ${d.digest} is missing`
  if (st.size !== d.size) return `blob ${d.digest} has ${st.size} bytes, the manifest says ${d.size}`
  const actual = `sha256:${createHash('sha256').update(await readFile(file)).digest('hex')}`
  return actual === d.digest ? undefined : `blob ${d.digest} hashes to ${actual}`
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await walk(full)))
    else out.push(full)
  }
  return out
}
