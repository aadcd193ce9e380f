#!/usr/bin/env node
/**
 * Keeps `npm ci` working against a registry that serves only this platform's prebuilt packages.
 *
 * Packages such as node-llama-cpp, rollup and Foundry's `@foundry-rs/anvil` / `@foundry-rs/forge` list one
 * optional dependency per platform (Foundry names x64 `amd64`). When the
 * registry answers 404 for the other platforms' packages, `npm install` leaves them out of
 * package-lock.json, and `npm ci` then refuses the lock as "not in sync". This script adds, for each
 * missing optional platform package, a lock entry that carries only its version and its os/cpu/libc
 * constraints (read from the package name), so `npm ci` sees the tree in sync and skips it as
 * not-for-this-platform without ever fetching it.
 *
 * It also keeps the install light (README, "Install size"): node-llama-cpp lists every prebuilt binary
 * as an optional dependency, and its GPU variants (`*-cuda`, `*-cuda-ext`, `*-vulkan`: 610 MB on x64
 * Linux) declare the same os/cpu/libc as the CPU build, so npm would install all of them on every x64
 * machine; the ARM Linux builds also declare `x64` in `cpu`. `npm ci` decides from the lock entry's
 * os/cpu/libc whether a package is for this machine, so the lock records:
 * - the ARM builds with only their own architecture (`@node-llama-cpp/linux-arm64` → `cpu: ["arm64"]`);
 * - the GPU builds with the CPU suffixed `+gpu` (`cpu: ["x64+gpu"]`), a CPU no machine reports, so
 *   `npm ci` skips them everywhere exactly like another platform's package. A GPU build is opted into
 *   with `npm run gpu -- cuda|vulkan` (scripts/gpu.mjs), which installs it without touching the lock.
 * node-llama-cpp picks its binary at run time (`gpu: "auto"`), so nothing else changes.
 *
 * Run after any `npm install` that touches the lock: `node scripts/lock-platforms.mjs`.
 * Idempotent; `--check` exits 1 when the lock needs fixing.
 */
import { readFileSync, writeFileSync } from 'node:fs'

const LOCK = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(LOCK, 'utf8'))
const packages = lock.packages

const OS = [
  ['android', 'android'],
  ['darwin', 'darwin'],
  ['mac', 'darwin'],
  ['freebsd', 'freebsd'],
  ['openbsd', 'openbsd'],
  ['openharmony', 'openharmony'],
  ['win32', 'win32'],
  ['win', 'win32'],
  ['linux', 'linux'],
]
const CPU = [
  ['arm64', 'arm64'],
  ['aarch64', 'arm64'],
  ['armv7l', 'arm'],
  ['arm', 'arm'],
  ['ia32', 'ia32'],
  ['x64', 'x64'],
  ['amd64', 'x64'],
  ['riscv64', 'riscv64'],
  ['loong64', 'loong64'],
  ['ppc64', 'ppc64'],
  ['s390x', 's390x'],
]

/** os/cpu/libc constraints from a platform package name like `@rollup/rollup-linux-x64-musl`. */
function platformOf(name) {
  const tokens = name.split('/').pop().split('-')
  const os = OS.find(([token]) => tokens.includes(token))?.[1]
  const cpu = CPU.find(([token]) => tokens.includes(token))?.[1]
  if (!os || !cpu) return undefined
  const libc = tokens.includes('musl') ? ['musl'] : os === 'linux' && tokens.includes('gnu') ? ['glibc'] : undefined
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) }
}

const added = []
for (const [path, entry] of Object.entries(packages)) {
  const optional = entry.optionalDependencies ?? {}
  const base = path === '' ? '' : `${path}/`
  for (const [name, spec] of Object.entries(optional)) {
    // Resolution walks up node_modules folders; npm hoists these to the top level.
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`]
    if (candidates.some((candidate) => packages[candidate])) continue
    const platform = platformOf(name)
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue
    const at = `node_modules/${name}`
    packages[at] = { version: spec, ...platform, license: 'MIT', optional: true }
    added.push(`${name}@${spec}`)
  }
}

/** Prebuilt GPU variants of node-llama-cpp: installed only on request (scripts/gpu.mjs). */
export const GPU_PACKAGE = /^@node-llama-cpp\/[a-z0-9]+-[a-z0-9]+-(cuda|cuda-ext|vulkan)$/
const ARM_PACKAGE = /^@node-llama-cpp\/linux-(arm64|armv7l)$/
const narrowed = []
for (const [path, entry] of Object.entries(packages)) {
  const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
  let cpu
  if (GPU_PACKAGE.test(name)) cpu = (platformOf(name)?.cpu ?? entry.cpu ?? []).map((c) => (c.endsWith('+gpu') ? c : `${c}+gpu`))
  else if (ARM_PACKAGE.test(name)) cpu = platformOf(name)?.cpu
  if (!cpu || JSON.stringify(cpu) === JSON.stringify(entry.cpu)) continue
  entry.cpu = cpu
  narrowed.push(`${name}: cpu ${JSON.stringify(cpu)}`)
}
added.push(...narrowed)

if (process.argv.includes('--check')) {
  if (added.length) {
    console.error(`package-lock.json lacks ${added.length} platform entries; run node scripts/lock-platforms.mjs`)
    process.exit(1)
  }
  process.exit(0)
}

if (added.length) {
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`)
}
console.log(added.length ? `fixed ${added.length} platform entries:\n  ${added.join('\n  ')}` : 'lock already complete')
