/**
 * `node scripts/run-parallel.mjs <script>...`: runs the named npm scripts at the same time (the static steps of
 * `npm test`: each is one single-threaded process, so on two cores two of them run for the price of one; run in a
 * row they leave one core idle, see docs/testing.md). Each script's output is printed whole when it
 * ends, so logs do not interleave. The first failure stops the others and exits 1; otherwise exits 0.
 *
 * Plain Node with no dependency (no tsx start-up), so it also runs before `npm run generate` ever did.
 */
import { spawn } from 'node:child_process'

const scripts = process.argv.slice(2)
if (scripts.length === 0) {
  console.error('usage: node scripts/run-parallel.mjs <npm script>...')
  process.exit(2)
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const t0 = Date.now()
const running = new Map()
let failed = false

function stopOthers() {
  for (const proc of running.values()) proc.kill('SIGTERM')
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => {
  stopOthers()
  process.exit(1)
})

const results = scripts.map(
  (name) =>
    new Promise((resolve) => {
      const chunks = []
      // `detached` gives each script its own process group, so a failure elsewhere can stop tsc, forge and their children.
      const proc = spawn(npm, ['run', '-s', name], { stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' })
      running.set(name, { kill: (sig) => { try { process.kill(-proc.pid, sig) } catch { proc.kill(sig) } } })
      proc.stdout.on('data', (c) => chunks.push(c))
      proc.stderr.on('data', (c) => chunks.push(c))
      proc.once('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)))
      proc.once('close', (code, signal) => {
        running.delete(name)
        const seconds = ((Date.now() - t0) / 1000).toFixed(1)
        const ok = code === 0
        const output = Buffer.concat(chunks).toString()
        if (!(failed && signal)) {
          process.stdout.write(`\n> npm run ${name}  (${ok ? 'ok' : `failed: ${signal ?? `exit ${code}`}`}, ${seconds} s)\n${output}`)
        }
        if (!ok && !failed) {
          failed = true
          stopOthers()
        }
        resolve(ok)
      })
    }),
)

const oks = await Promise.all(results)
process.exit(oks.every(Boolean) && !failed ? 0 : 1)
