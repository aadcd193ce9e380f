#!/usr/bin/env node
/**
 * Opt into a GPU build of node-llama-cpp: `npm run gpu -- cuda` or `npm run gpu -- vulkan`.
 *
 * `npm ci` leaves node-llama-cpp's prebuilt GPU packages out (scripts/lock-platforms.mjs marks them in the
 * lock so no machine matches them). This installs the prebuilt package(s) for this platform at the version
 * node-llama-cpp pins, with `--no-save`, so package.json and package-lock.json stay as they are; the next
 * `npm ci` removes them again. node-llama-cpp finds them at run time (`gpu: "auto"`).
 * CUDA needs both `-cuda` and `-cuda-ext` (the CUDA runtime libraries).
 *
 * Without a prebuilt package for this platform, node-llama-cpp can build from source instead:
 * `npx --no node-llama-cpp source download --gpu cuda` (needs CMake and the GPU toolkit).
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const kind = process.argv[2]
const variants = { cuda: ['cuda', 'cuda-ext'], vulkan: ['vulkan'] }
if (!variants[kind]) {
  console.error('usage: npm run gpu -- cuda|vulkan')
  process.exit(2)
}
const os = { linux: 'linux', win32: 'win' }[process.platform]
if (!os || process.arch !== 'x64') {
  console.error(`no prebuilt ${kind} package for ${process.platform}-${process.arch}; build from source:`)
  console.error(`  npx --no node-llama-cpp source download --gpu ${kind}`)
  process.exit(1)
}
// node-llama-cpp does not export its package.json; npm installs it at the top level.
const llama = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8'))
const specs = variants[kind].map((v) => {
  const name = `@node-llama-cpp/${os}-x64-${v}`
  const version = llama.optionalDependencies?.[name]
  if (!version) throw new Error(`node-llama-cpp ${llama.version} lists no ${name}`)
  return `${name}@${version}`
})
console.log(`installing ${specs.join(' ')} (not saved to package.json or the lock)`)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const r = spawnSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', ...specs], { stdio: 'inherit' })
process.exit(r.status ?? 1)
