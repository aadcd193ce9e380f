/**
 * A payment rail is a plug-in: only its own folder (src/x402/rails/<family>/) and the one network table
 * (src/x402/networks.ts) know a chain family. Anywhere else a branch on a rail's kind, an `eip155:` prefix test or
 * an `algorand:` literal means a new rail would have to touch that file too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const SCANNED = ['src', 'scripts', 'bin']
/** Where a chain family may be named: the rails' folders and the network table. */
const ALLOWED = [/^src\/x402\/rails\//, /^src\/x402\/networks\.ts$/]
/**
 * Unit tests beside the code feed real network ids (`algorand:<genesis>`) to what they test; they are data, not
 * branches, and are left out.
 */
const IS_TEST = /\.test\.ts$/
const CHAIN_FAMILY = /kind === '(evm|algorand|evm-upto)'|startsWith\('eip155:'\)|'algorand:/

/**
 * The CLI pays through the rails' client sides (src/x402/rails/clientRails.ts, picked by the requirement's
 * network): it imports no chain's SDK or signer, branches on no rail's name and declares no chain's key option.
 */
const CLI = /^src\/cli\//
const CLI_CHAIN = /from '(algosdk|@x402\/evm[^']*|viem[^']*)'|=== 'algorand'|--algod|--algorand|--key-env/

type Hit = { file: string; line: number; text: string }

/** The lines of `text` (the file `file`, relative to the repository) that name a chain family where none may. */
function chainFamilyHits(file: string, text: string): Hit[] {
  if (ALLOWED.some((a) => a.test(file)) || IS_TEST.test(file)) return []
  const named = (line: string) => CHAIN_FAMILY.test(line) || (CLI.test(file) && CLI_CHAIN.test(line))
  return text.split('\n').flatMap((line, i) => (named(line) ? [{ file, line: i + 1, text: line.trim() }] : []))
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path)
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : []
  })
}

describe('chain families stay inside the rails', () => {
  it('no file outside the rails and the network table branches on a chain family', () => {
    const hits = SCANNED.flatMap((d) => sourceFiles(join(ROOT, d))).flatMap((path) => chainFamilyHits(relative(ROOT, path), readFileSync(path, 'utf8')))
    expect(hits).toEqual([])
  })

  it('finds a planted prefix test in the storage domain, and none in a rail', () => {
    const planted = "export const onEvm = (network: string) => network.startsWith('eip155:')\n"
    expect(chainFamilyHits('src/storage/planted.ts', planted)).toEqual([{ file: 'src/storage/planted.ts', line: 1, text: planted.trim() }])
    expect(chainFamilyHits('src/storage/planted.ts', "if (rail.kind === 'algorand') return\n")).toHaveLength(1)
    expect(chainFamilyHits('src/cli/planted.ts', "const prefix = 'algorand:'\n")).toHaveLength(1)
    expect(chainFamilyHits('src/x402/rails/evm/planted.ts', planted)).toEqual([])
  })

  it('finds a rail branch, a chain SDK and a chain key option planted in the CLI, and none in a rail client side', () => {
    for (const line of ["const algorand = options.rail === 'algorand' ? algorandKey(options) : undefined", "import algosdk from 'algosdk'", "import { ExactEvmScheme } from '@x402/evm/exact/client'", "import { privateKeyToAccount } from 'viem/accounts'", ".option('--algod <url>', 'Algorand node')", ".option('--key-env <name>', 'EVM key')"]) {
      expect(chainFamilyHits('src/cli/store.ts', `${line}\n`), line).toHaveLength(1)
      expect(chainFamilyHits('src/x402/rails/algorand/algorandClientRail.ts', `${line}\n`), line).toEqual([])
    }
  })
})
