// A native-looking `solc` for forge, answered by solc-js (the npm `solc` package, pinned in package.json).
// forge (offline, auto_detect_solc = false) runs `solc --version` and `solc --standard-json [flags]` with
// the Standard JSON input on stdin; forge resolves imports itself and sends every source's content, but
// an import callback is installed anyway so that direct callers can rely on node_modules resolution.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const solc = require('solc')

const args = process.argv.slice(2)

if (args.includes('--version') || args.includes('-v')) {
  // solc-js reports `0.8.30+commit.73712a01.Emscripten.clang`; forge parses the native form.
  const version = solc.version().replace(/\.Emscripten\.clang$/, '.Linux.g++')
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${version}\n`)
  process.exit(0)
}

if (!args.includes('--standard-json')) {
  process.stderr.write('This solc wrapper only supports --version and --standard-json.\n')
  process.exit(1)
}

const input = readFileSync(0, 'utf8')

function findImports(path) {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') }
  } catch {
    try {
      return { contents: readFileSync(path, 'utf8') }
    } catch {
      return { error: `File not found: ${path}` }
    }
  }
}

process.stdout.write(solc.compile(input, { import: findImports }))
