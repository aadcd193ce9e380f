/**
 * `npm run soak -- --instances 2 --seconds 120 [--max-upload-mb 64]`: the soak of docs/reliability.md. Prints
 * the reconciliation table; exits 1 on any breach.
 */
import { parseArgs } from 'node:util'
import { reportTable, runSoak } from './runSoak.js'

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '120' },
    'max-upload-mb': { type: 'string', default: '64' },
    uploaders: { type: 'string', default: '3' },
  },
})
const int = (name: string, text: string, min: number) => {
  const n = Number(text)
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`--${name} must be an integer ≥ ${min}\n`)
    process.exit(2)
  }
  return n
}
const report = await runSoak({
  instances: int('instances', values.instances!, 1),
  seconds: int('seconds', values.seconds!, 10),
  maxUploadBytes: int('max-upload-mb', values['max-upload-mb']!, 1) * 1024 * 1024,
  uploaders: int('uploaders', values.uploaders!, 1),
})
process.stdout.write(`${reportTable(report.checks)}\n${report.ok ? 'soak: PASS' : 'soak: FAIL'}\n`)
process.exit(report.ok ? 0 : 1)
