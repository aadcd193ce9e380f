/**
 * `npm run test:contracts`: the Solidity tests of `contracts/test`, run by the npm forge binary, offline,
 * with the solc-js wrapper of `contracts/solc/` as the compiler (see contracts/foundry.toml). Extra
 * arguments go to `forge test` (e.g. `npm run test:contracts -- --match-contract Treasury -vvv`).
 * Exits with forge's status, so a failing test fails `npm test`. Without a forge binary for the platform
 * (devnet/chains/foundryBinary.ts) it prints one line and exits 0.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { foundryBinary } from '../devnet/chains/foundryBinary.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const found = foundryBinary('forge')
if (found.path === undefined) {
  // A platform Foundry builds no forge for: say so and let `npm test` run the rest.
  console.log(`test:contracts: skipped, ${found.reason}`)
  process.exit(0)
}
const forge = found.path

// foundry.toml's `solc = "solc/solc"` is resolved against the working directory, so run from contracts/.
const result = spawnSync(forge, ['test', ...process.argv.slice(2)], {
  cwd: join(root, 'contracts'),
  stdio: 'inherit',
  env: { ...process.env, FOUNDRY_OFFLINE: 'true', FOUNDRY_DISABLE_NIGHTLY_WARNING: '1', NO_COLOR: '1' },
})
if (result.error) {
  console.error(`test:contracts: could not run forge (${forge}): ${result.error.message}`)
  process.exit(1)
}
process.exit(result.status ?? 1)
