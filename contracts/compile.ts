/**
 * Offline Solidity compiler for the repository's contracts (solc-js, no network).
 *
 * - Sources are paths relative to `contracts/src` (e.g. `devnet/UsdcToken.sol`).
 * - `@openzeppelin/...` and other package imports resolve through Node's module resolution;
 *   relative imports resolve against `contracts/src`.
 * - Output is cached under `contracts/out/` keyed by a SHA-256 over the compiler version, the settings
 *   and the content of every source file involved (including imports), so a warm start loads JSON and
 *   never touches solc. Artifacts are deterministic (fixed settings, sorted keys).
 *
 * CLI: `tsx contracts/compile.ts [file.sol ...]` (default: every .sol under contracts/src).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

export const CONTRACTS_DIR = dirname(fileURLToPath(import.meta.url))
export const SOURCES_DIR = join(CONTRACTS_DIR, 'src')
/** Artifact cache; `CONTRACTS_OUT_DIR` overrides it (CI caches, cold-start measurements). */
export const OUT_DIR = process.env.CONTRACTS_OUT_DIR ? resolve(process.env.CONTRACTS_OUT_DIR) : join(CONTRACTS_DIR, 'out')

export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const

export interface Artifact {
  contractName: string
  sourceName: string
  abi: readonly unknown[]
  bytecode: `0x${string}`
  deployedBytecode: `0x${string}`
}

export type Artifacts = Record<string, Artifact>

export interface CompileOptions {
  /** Cache directory (default `contracts/out`). */
  outDir?: string
  /** Ignore the cache. */
  force?: boolean
}

function solcVersion(): string {
  return (require('solc/package.json') as { version: string }).version
}

/** Resolves an import path as solc sees it to a file on disk. */
export function resolveImport(path: string): string {
  if (path.startsWith('@') || !path.startsWith('.')) {
    const local = join(SOURCES_DIR, path)
    if (!path.startsWith('@') && existsSync(local)) return local
    return require.resolve(path)
  }
  return join(SOURCES_DIR, path)
}

const IMPORT_RE = /^\s*import\s+(?:[^'"]*?from\s+)?["']([^"']+)["']\s*;/gm

function normalise(from: string, imported: string): string {
  if (!imported.startsWith('.')) return imported
  // Relative import: resolve against the importing unit's source name.
  const base = from.split('/').slice(0, -1)
  for (const part of imported.split('/')) {
    if (part === '.') continue
    if (part === '..') base.pop()
    else base.push(part)
  }
  return base.join('/')
}

/** Collects every source unit reachable from `roots`, keyed by solc source name. */
function collectSources(roots: string[]): Map<string, string> {
  const found = new Map<string, string>()
  const queue = [...roots]
  while (queue.length > 0) {
    const name = queue.shift() as string
    if (found.has(name)) continue
    const content = readFileSync(resolveImport(name), 'utf8')
    found.set(name, content)
    for (const m of content.matchAll(IMPORT_RE)) queue.push(normalise(name, m[1] as string))
  }
  return found
}

export function listSources(dir = SOURCES_DIR): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name)
      if (entry.isDirectory()) walk(p)
      else if (entry.name.endsWith('.sol')) out.push(relative(SOURCES_DIR, p).split(sep).join('/'))
    }
  }
  walk(dir)
  return out.sort()
}

function cacheKey(sources: Map<string, string>, roots: string[]): string {
  const h = createHash('sha256')
  h.update(`solc ${solcVersion()}\n${JSON.stringify(COMPILER_SETTINGS)}\nroots ${roots.join(',')}\n`)
  for (const name of [...sources.keys()].sort()) {
    h.update(`${name}\n${createHash('sha256').update(sources.get(name) as string).digest('hex')}\n`)
  }
  return h.digest('hex').slice(0, 32)
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[]
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
}

/**
 * Compiles `files` (relative to contracts/src; default all) and returns artifacts keyed by contract name
 * for the contracts defined in those files (not their imports).
 */
export function compileContracts(files: string[] = listSources(), opts: CompileOptions = {}): Artifacts {
  const outDir = opts.outDir ?? OUT_DIR
  const roots = [...files].map((f) => f.split(sep).join('/')).sort()
  const sources = collectSources(roots)
  const key = cacheKey(sources, roots)
  const cacheFile = join(outDir, `build-${key}.json`)
  if (!opts.force && existsSync(cacheFile)) {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as Artifacts
  }

  // Loading solc-js is slow (wasm); only do it on a cache miss.
  const solc = require('solc') as { compile(input: string, cb?: { import: (p: string) => { contents?: string; error?: string } }): string }
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries([...sources].map(([name, content]) => [name, { content }])),
    settings: COMPILER_SETTINGS,
  }
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), {
      import: (p: string) => {
        try {
          return { contents: readFileSync(resolveImport(p), 'utf8') }
        } catch (err) {
          return { error: `cannot resolve ${p}: ${(err as Error).message}` }
        }
      },
    }),
  ) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  }

  const artifacts: Artifacts = {}
  for (const sourceName of roots) {
    for (const [contractName, c] of Object.entries(output.contracts[sourceName] ?? {})) {
      artifacts[contractName] = {
        contractName,
        sourceName,
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      }
    }
  }

  mkdirSync(outDir, { recursive: true })
  const tmp = `${cacheFile}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(artifacts))
  renameSync(tmp, cacheFile)
  for (const a of Object.values(artifacts)) {
    const f = join(outDir, `${a.contractName}.json`)
    writeFileSync(`${f}.${process.pid}.tmp`, `${JSON.stringify(a, null, 2)}\n`)
    renameSync(`${f}.${process.pid}.tmp`, f)
  }
  return artifacts
}

/** Compiles (or loads from cache) one contract by name from one source file. */
export function loadArtifact(sourceFile: string, contractName: string, opts?: CompileOptions): Artifact {
  const a = compileContracts([sourceFile], opts)[contractName]
  if (!a) throw new Error(`contract ${contractName} not found in ${sourceFile}`)
  return a
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2).map((f) => relative(SOURCES_DIR, resolve(f)).split(sep).join('/'))
  const t0 = Date.now()
  const artifacts = compileContracts(files.length > 0 ? files : listSources())
  for (const a of Object.values(artifacts)) {
    console.log(`${a.sourceName}:${a.contractName} ${(a.bytecode.length - 2) / 2} bytes`)
  }
  console.log(`done in ${Date.now() - t0} ms → ${relative(process.cwd(), OUT_DIR)}`)
}
