/**
 * No function over 100 lines outside the page templates: a long function mixes several steps that each deserve a
 * name. The scan uses the TypeScript compiler's own parser, so arrow functions, methods, accessors and
 * `#private` members are all counted the same way.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const SCANNED = ['src', 'scripts', 'bin', 'devnet', 'conformance']
const MAX_LINES = 100
/** Page templates are long by nature (one function renders one page) and are exempt. */
const EXEMPT = [/^src\/pages\//, /\.test\.ts$/, /\.d\.ts$/]

type LongFunction = { file: string; line: number; name: string; length: number }

/** The name a reader would search for: the declared name, else the variable or property it is assigned to. */
function functionName(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source)
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText(source)
  }
  return '(anonymous)'
}

/** Every function-like node with a body in `text` (the file `file`) that spans more than MAX_LINES lines. */
function longFunctions(file: string, text: string): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: LongFunction[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const length = last - first + 1
      if (length > MAX_LINES) found.push({ file, line: first + 1, name: functionName(node, source), length })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path)
    return /\.(ts|mts)$/.test(name) ? [path] : []
  })
}

function scan(): LongFunction[] {
  return SCANNED.flatMap((d) => sourceFiles(join(ROOT, d)))
    .map((path) => relative(ROOT, path))
    .filter((file) => !EXEMPT.some((e) => e.test(file)))
    .flatMap((file) => longFunctions(file, readFileSync(join(ROOT, file), 'utf8')))
}

const describeLong = (f: LongFunction) => `${f.file}:${f.line} ${f.name} ${f.length} lines`

describe('function length', () => {
  const found = scan()

  it(`no function outside the page templates is over ${MAX_LINES} lines`, () => {
    expect(found.map(describeLong)).toEqual([])
  })

  it('finds a planted 101-line function and passes one of 100 lines', () => {
    const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const a${i} = ${i}`).join('\n')
    const planted = `export function planted() {\n${body(101)}\n}\n`
    expect(longFunctions('src/planted.ts', planted)).toEqual([{ file: 'src/planted.ts', line: 1, name: 'planted', length: 101 }])
    expect(longFunctions('src/planted.ts', `export const arrow = () => {\n${body(101)}\n}\n`).map((f) => f.name)).toEqual(['arrow'])
    expect(longFunctions('src/planted.ts', `export function short() {\n${body(100)}\n}\n`)).toEqual([])
  })
})
