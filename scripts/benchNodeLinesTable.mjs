/**
 * `node scripts/benchNodeLinesTable.mjs <log dir>`: the table of scripts/benchNodeLines.sh from its logs
 * (`<round>-<version>-pipeline.log`, `…-llm.log`): per run, the load average before it, the pipeline's saturated
 * req/s (bare Express and the gateway on SQLite, per route) and the LLM gateway's first-token time and tokens/s
 * (through the gateway, per stream). Markdown, for docs/performance.md. Plain Node, no dependency.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node scripts/benchNodeLinesTable.mjs <log dir>')
  process.exit(2)
}
const runs = new Map() // "<round> <version>" → figures
for (const file of readdirSync(dir).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))) {
  const m = /^(\d+)-([\d.]+)-(pipeline|llm)\.log$/.exec(file)
  if (!m) continue
  const [, round, version, bench] = m
  const key = `${round} ${version}`
  const run = runs.get(key) ?? runs.set(key, { round, version, cells: new Map() }).get(key)
  const text = readFileSync(join(dir, file), 'utf8')
  const loadBefore = /load before: ([\d.]+)/.exec(text)?.[1]
  if (bench === 'pipeline') {
    run.load = loadBefore
    // the saturated table: a route's first row is bare Express, the rows after it (empty first cell) the gateways
    let route = ''
    for (const line of text.split('\n')) {
      const cols = line.split(/\s{2,}/)
      if (cols.length < 5 || !/^\d+$/.test(cols[2] ?? '')) continue
      if (cols[0]) route = cols[0]
      run.cells.set(`${route}, ${cols[1]} req/s`, Number(cols[2]).toLocaleString('en-US'))
    }
  } else {
    for (const line of text.split('\n')) {
      const cols = line.split('|').map((c) => c.trim())
      // | Stream | TTFT direct | TTFT gateway | added … | tokens/s direct | tokens/s gateway | ratio … |
      if (cols.length === 9 && /^\d/.test(cols[2]) && /^\d+$/.test(cols[6])) {
        run.cells.set(`${cols[1]}: first token through the gateway, ms`, cols[3])
        run.cells.set(`${cols[1]}: tokens/s through the gateway`, cols[6])
      }
    }
  }
}
const all = [...runs.values()]
const names = [...new Set(all.flatMap((r) => [...r.cells.keys()]))]
const columns = [...names.filter((c) => c.endsWith('req/s')), ...names.filter((c) => !c.endsWith('req/s'))]
console.log(`| measure | ${all.map((r) => `Node ${r.version}, round ${r.round}`).join(' | ')} |`)
console.log(`|---|${all.map(() => '---:').join('|')}|`)
console.log(`| load average (1 min) before | ${all.map((r) => r.load ?? '').join(' | ')} |`)
for (const c of columns) console.log(`| ${c} | ${all.map((r) => r.cells.get(c) ?? '').join(' | ')} |`)
