/**
 * The Node flags operators start the gateway with, read from `npm run serve` in package.json
 * (`node <flags> dist/src/main.js`). `npm start` (scripts/start.ts) and the pipeline benchmark start the
 * gateway with the same flags, so the benchmark measures the process operators run and the three cannot drift
 * apart. Why these flags: docs/performance.md, "What the figures depend on".
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The flags between `node` and the entry point of a `node … dist/src/main.js` command line. */
export function serveNodeFlags(command: string): string[] {
  const words = command.trim().split(/\s+/)
  const entry = words.indexOf('dist/src/main.js')
  if (words[0] !== 'node' || entry < 0) throw new Error(`the serve script is not "node [flags] dist/src/main.js": ${command}`)
  return words.slice(1, entry)
}

const packageJson = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { scripts: Record<string, string> }
export const gatewayNodeFlags: readonly string[] = serveNodeFlags(packageJson.scripts.serve!)
