/**
 * `npm run conformance`: the conformance CLI (`cli.ts`, where its flags are) on this process's arguments.
 */
import { conformanceCli } from './cli.js'

process.exitCode = await conformanceCli(process.argv.slice(2), { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) })
