/**
 * The repository speaks to its users and maintainers, never of how it was built: no development-session, CI-run,
 * issue or pull-request numbers, no review findings by number, no section titles of work items, no roles of the
 * process that built it. How a figure was chased or a bug was found lives in git log; the docs give the current
 * figure with the command that reproduces it, and a comment says why the code is as it is.
 *
 * A reference to another project's tracker stays: a link (`…/issues/123`) or `owner/repo#123` does not match.
 *
 * Run it alone: `npx vitest run tests/docs/historyWords.test.ts` (it prints `file:line: text` of every hit).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

/**
 * What development history looks like in this repository's text. Each pattern needs a number, a section name of a
 * work item or a role of the process beside the word, so the product's own words pass: a login session, an
 * `Mcp-Session-Id`, a route that "issues" a nonce, a CI that runs the suite.
 */
export const HISTORY_PATTERNS: { what: string; pattern: RegExp }[] = [
  { what: 'a development session', pattern: /\bsessions?\s+\d+/i },
  { what: 'an issue of this project', pattern: /\bissues?(?:\s+|-)#?\d+(?![\dx])/i },
  { what: 'a CI run', pattern: /\bCI(?:[ -]runs?)?\s+(?:of\s+)?\d+/i },
  { what: 'a pull request', pattern: /\b(?:PR|pull requests?)\s+#?\d+/ },
  { what: 'a review finding', pattern: /\bfindings?\s+\d+/i },
  { what: "a work item's section", pattern: /\bdone[- ]when\b/i },
  { what: 'a wave of work', pattern: /\bwave\s+\d+/i },
  { what: 'a role of the development process', pattern: /\bthe (?:lead|merger)\b|\bgrader\b/i },
  { what: 'a commit of the history', pattern: /\b(?:main at|fixed in|landed in)\s+[0-9a-f]{7,40}\b/i },
]

/** The first history pattern `line` matches, or `undefined`. */
export function historyIn(line: string): { what: string; match: string } | undefined {
  for (const { what, pattern } of HISTORY_PATTERNS) {
    const m = pattern.exec(line)
    if (m) return { what, match: m[0] }
  }
  return undefined
}

/** What is read: every text file under these, as a clean clone has them. */
const SCANNED = [
  'README.md',
  'docs',
  'src',
  'tests',
  'scripts',
  'conformance',
  '.ci',
  'devnet',
  'contracts',
  'openapi',
  'asyncapi',
  'bin',
  'deploy',
  'Containerfile',
  'compose.yaml',
  'vitest.config.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'redocly.yaml',
  '.dependency-cruiser.cjs',
]
/** Folders that are built, installed or written at run time, not written by us: by name anywhere, or by path from the root. */
const NOT_OURS = new Set(['node_modules'])
const NOT_OURS_PATHS = new Set(['dist', 'data', '.tmp', 'generated', 'contracts/out', 'contracts/cache', 'docs/images'])
const TEXT = /\.(?:[cm]?[jt]s|md|ya?ml|json|sh|sol|toml|cfg|html|css|txt)$/
/** Files without an extension that are ours (`.ci/run`, `Containerfile`). */
const BARE = /(?:^|\/)(?:run|Containerfile)$/

function* textFiles(path: string): Generator<string> {
  if (!existsSync(path)) return
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (!NOT_OURS.has(entry) && !NOT_OURS_PATHS.has(relative(root, join(path, entry)))) yield* textFiles(join(path, entry))
    }
  } else if (TEXT.test(path) || BARE.test(path)) {
    yield path
  }
}


type Hit = { file: string; line: number; text: string; what: string }

function scan(): Hit[] {
  const hits: Hit[] = []
  for (const top of SCANNED) {
    for (const path of textFiles(join(root, top))) {
      const file = relative(root, path)
      const lines = readFileSync(path, 'utf8').split('\n')
      lines.forEach((text, i) => {
        // a line, or its end read with the next line's start (a comment or description wrapped mid-phrase)
        const next = lines[i + 1]?.trim() ?? ''
        const found = historyIn(text) ?? (historyIn(next) ? undefined : historyIn(`${text} ${next}`))
        if (found) hits.push({ file, line: i + 1, text: text.trim(), what: `${found.what}: "${found.match}"` })
      })
    }
  }
  return hits
}

const show = (hits: Hit[]) => hits.map((h) => `${h.file}:${h.line}: ${h.what} — ${h.text.slice(0, 160)}`).join('\n')

describe('no development history in the repository', () => {
  const hits = scan()

  it('README, docs, code, tests, scripts and CI speak of the product, not of how it was built', () => {
    expect(hits.length, `development history (git log keeps it; say what is true now):\n${show(hits)}`).toBe(0)
  })

  it('tells history from the product\'s own words', () => {
    // Built from parts so that this file's own text does not match.
    const n = 16
    for (const line of [
      `measured in session ${n}`,
      `CI runs of sessions ${n}–${n + 1}`,
      `(issue ${n})`,
      `Issue ${n}'s Done${'-'}when`,
      `the issues ${n}, ${n + 1}`,
      `CI ${n}: clean clone`,
      `every CI run of ${2026}-11-27`,
      `issue ${n} finding ${n % 7}`,
      `after wave ${n % 4} added its suites`,
      `the ${'lead'}'s quiet-machine run`, `the ${'grad'}er's machine`,
      `main at ${'587982d'}`,
      `a pre-issue-${n} file`,
    ]) expect(historyIn(line), line).toBeDefined()
    for (const line of [
      'a session token for X-Session-Token',
      'Mcp-Session-Id: 3f2a',
      `issues 0x + ${n * 4} hex nonces valid 120 s`,
      `see https://github.com/nodejs/undici/issues/${n * 100}`,
      `ollama/ollama#${n * 1000}`,
      `${n} upload sessions are open`,
      'CI runs the whole suite on Node 24',
      'the leader election',
    ]) expect(historyIn(line), line).toBeUndefined()
  })
})
