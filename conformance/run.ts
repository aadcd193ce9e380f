/**
 * `npm run conformance -- --target <url> [--mock] [--machine <file.yaml>]… [--key name=0x…]… [--var name=value]…`
 *
 * Replays the gateway's state machines (default: `machines/gateway/*.yaml`) against the deployment at
 * `--target`, checking every response against `openapi/gateway.yaml`. `--mock` replays only the rows that
 * hold on a stateless mock (Prism). Exit code 1 when any row fails.
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { formatResults, gatewayMachineFiles, runMachines } from './runner.js'

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    mock: { type: 'boolean', default: false },
    machine: { type: 'string', multiple: true },
    key: { type: 'string', multiple: true },
    var: { type: 'string', multiple: true },
    document: { type: 'string' },
  },
})

if (!values.target) {
  process.stderr.write('usage: npm run conformance -- --target <base url> [--mock] [--machine file.yaml] [--key name=0x…] [--var name=value]\n')
  process.exit(2)
}

const pairs = (list: string[] | undefined) =>
  Object.fromEntries(
    (list ?? []).map((entry) => {
      const index = entry.indexOf('=')
      return [entry.slice(0, index), entry.slice(index + 1)]
    }),
  )

const results = await runMachines(values.machine?.map((m) => path.resolve(m)) ?? gatewayMachineFiles, {
  target: values.target,
  mockOnly: values.mock,
  keys: pairs(values.key) as Record<string, `0x${string}`>,
  vars: pairs(values.var),
  documentPath: values.document,
})
process.stdout.write(`${formatResults(results)}\n`)
const failed = results.filter((r) => !r.ok)
const ran = results.filter((r) => !r.skipped)
process.stdout.write(`\n${ran.length - failed.length}/${ran.length} transitions conform${results.length > ran.length ? ` (${results.length - ran.length} skipped)` : ''}\n`)
process.exit(failed.length === 0 ? 0 : 1)
