/**
 * `npm run bench` — runs every benchmark in scripts/bench/ (the files directly in it; their helpers live in
 * scripts/bench/support/), one child process each (native addons and servers stay isolated), in name order.
 * `npm run bench -- <substring>...` runs only the matching files; arguments after `--` a second time are passed
 * to each benchmark.
 *
 *   npm run bench
 *   npm run bench -- modelserver
 *   npm run bench -- modelserverEngine -- --tokens 200
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('./bench/', import.meta.url))
const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))
const argv = process.argv.slice(2)
const split = argv.indexOf('--')
const filters = split >= 0 ? argv.slice(0, split) : argv
const passThrough = split >= 0 ? argv.slice(split + 1) : []

const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort()

if (files.length === 0) {
  console.error(`no benchmark in scripts/bench/ matches ${filters.join(', ')}`)
  process.exit(1)
}

let failed = 0
for (const file of files) {
  console.log(`\n=== ${file} ===`)
  const started = performance.now()
  const code = await new Promise<number>((resolve) => {
    const child = spawn(tsx, [join(dir, file), ...passThrough], { stdio: 'inherit' })
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)))
    child.on('error', () => resolve(1))
  })
  console.log(`=== ${file}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  if (code !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
