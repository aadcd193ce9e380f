/**
 * docs/configuration.md against the code: every setting the gateway reads (a `SERVICE_*`, `SHADOW_*`,
 * `FACILITATOR_TOKEN`, `OTEL_*` or `LOG_LEVEL` name written in `src/`, the model server and the CLI apart: they have
 * their own pages) has a row, and no row names a setting nothing reads.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { envSuffix, EVM_NETWORKS } from '../../src/x402/networks.js'

const root = join(import.meta.dirname, '..', '..')
/** A setting's name as code reads it: in quotes or backticks, or as `env.NAME` (not a constant's identifier; `NAME*` in a comment is a family). */
const NAME = /(?<=['"`.])(SERVICE_[A-Z0-9_]*[A-Z0-9]|SHADOW_[A-Z0-9_]*[A-Z0-9]|FACILITATOR_TOKEN|OTEL_[A-Z_]*[A-Z]|LOG_LEVEL)\b(?!\*)/g

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return ['modelserver', 'cli'].includes(relative(join(root, 'src'), path)) ? [] : sources(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : []
  })
}

/** The names the code reads, with those it builds per EVM network (`SERVICE_X402__ASSET__<network>`, …). */
function namesInCode(): Set<string> {
  const found = new Set<string>()
  for (const file of sources(join(root, 'src'))) for (const [name] of readFileSync(file, 'utf8').matchAll(NAME)) found.add(name)
  for (const { network } of EVM_NETWORKS) for (const prefix of ['SERVICE_X402__ASSET__', 'SERVICE_X402__RPC_URL__']) found.add(`${prefix}${envSuffix(network)}`)
  return found
}

const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8')
/** The names of the tables' first column. */
const rows = new Set([...doc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!))

describe('docs/configuration.md', () => {
  it('has a row for every setting the gateway reads', () => {
    const missing = [...namesInCode()].filter((n) => !rows.has(n) && !['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS'].includes(n))
    expect(missing).toEqual([])
  })

  it('has no row for a setting nothing reads', () => {
    const inCode = namesInCode()
    expect([...rows].filter((n) => !inCode.has(n))).toEqual([])
  })

  it('groups its rows: every table sits under a heading, and no setting has two rows', () => {
    const all = [...doc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!)
    expect(all.length).toBe(rows.size)
    expect(doc.match(/^## /gm)!.length).toBeGreaterThanOrEqual(10)
  })
})
