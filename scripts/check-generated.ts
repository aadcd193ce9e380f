/**
 * `npm run check:generated` — fails when `generated/` is not exactly what `npm run generate` produces
 * from the current documents. Regenerates into a temporary directory and compares byte for byte,
 * listing every file that differs, is missing, or is extra.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { syncDocLists } from './docLists.js'
import { apis, generateAll, repoRoot } from './generate.js'

export interface GeneratedDiff {
  /** Files whose bytes differ. */
  changed: string[]
  /** Files that generation produces but `generated/` lacks. */
  missing: string[]
  /** Files in `generated/<api>/` that generation does not produce. */
  extra: string[]
}

function listFiles(dir: string, base = dir): string[] {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return []
  }
  const files: string[] = []
  for (const name of entries) {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) files.push(...listFiles(full, base))
    else files.push(path.relative(base, full).split(path.sep).join('/'))
  }
  return files.sort()
}

/** Compares two generated trees (`<root>/<api>/...`) for the given APIs. */
export function compareTrees(expectedRoot: string, actualRoot: string, apiNames: readonly string[]): GeneratedDiff {
  const diff: GeneratedDiff = { changed: [], missing: [], extra: [] }
  for (const api of apiNames) {
    const expected = new Set(listFiles(path.join(expectedRoot, api)))
    const actual = new Set(listFiles(path.join(actualRoot, api)))
    for (const file of expected) {
      const rel = `${api}/${file}`
      if (!actual.has(file)) {
        diff.missing.push(rel)
        continue
      }
      const a = readFileSync(path.join(expectedRoot, rel))
      const b = readFileSync(path.join(actualRoot, rel))
      if (!a.equals(b)) diff.changed.push(rel)
    }
    for (const file of actual) if (!expected.has(file)) diff.extra.push(`${api}/${file}`)
  }
  return diff
}

/** Regenerates into a temporary directory and compares it with `generated/`. */
export async function checkGenerated(): Promise<GeneratedDiff & { apis: string[] }> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'check-generated-'))
  try {
    const generated = await generateAll(tmp, { quiet: true })
    // A document that disappeared must not leave stale output behind either.
    const names = apis.map((a) => a.name).filter((n) => generated.includes(n) || listFiles(path.join(repoRoot, 'generated', n)).length > 0)
    return { ...compareTrees(tmp, path.join(repoRoot, 'generated'), names), apis: generated }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

export function formatDiff(diff: GeneratedDiff): string {
  return [
    ...diff.changed.map((f) => `  changed  generated/${f}`),
    ...diff.missing.map((f) => `  missing  generated/${f}`),
    ...diff.extra.map((f) => `  extra    generated/${f}`),
  ].join('\n')
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href

if (invokedDirectly) {
  const diff = await checkGenerated()
  const problems = diff.changed.length + diff.missing.length + diff.extra.length
  if (problems > 0) {
    console.error(`check:generated: generated/ is stale (${problems} file(s)); run \`npm run generate\`:`)
    console.error(formatDiff(diff))
    process.exit(1)
  }
  const staleDocs = syncDocLists(repoRoot, 'check')
  if (staleDocs.length > 0) {
    console.error(`check:generated: lists in the docs are stale; run \`npm run generate\`:\n${staleDocs.map((d) => `  ${d}`).join('\n')}`)
    process.exit(1)
  }
  console.log(`check:generated: generated/ is up to date (${diff.apis.join(', ')})`)
}
