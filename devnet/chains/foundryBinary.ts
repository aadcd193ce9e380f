/**
 * Where Foundry's `anvil` and `forge` binaries are on this machine. `@foundry-rs/anvil` / `@foundry-rs/forge`
 * list one optional package per platform (`@foundry-rs/anvil-darwin-arm64`, `-darwin-amd64`, `-linux-arm64`,
 * `-linux-amd64`, `-win32-amd64`) and npm installs the one whose `os`/`cpu` match. We start the binary inside
 * it directly (the wrappers' `bin.mjs` would leave an orphan on SIGTERM, and their postinstall downloads a
 * fallback binary, which is off: `allowScripts`). On a platform Foundry does not build for (or when npm left
 * the package out) there is no binary: the result says so in one line instead of throwing.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

export type FoundryTool = 'anvil' | 'forge'

/** Foundry's names for the platforms it builds (its packages say `amd64` where Node says `x64`). */
const FOUNDRY_PLATFORMS = new Map<string, string>([
  ['darwin-arm64', 'darwin-arm64'],
  ['darwin-x64', 'darwin-amd64'],
  ['linux-arm64', 'linux-arm64'],
  ['linux-x64', 'linux-amd64'],
  ['win32-x64', 'win32-amd64'],
])

export type FoundryBinary = { path: string; packageName: string } | { path: undefined; reason: string }

/** The npm package holding `tool` for a platform, or undefined when Foundry builds none for it. */
export function foundryPackageName(tool: FoundryTool, platform: string = process.platform, arch: string = process.arch): string | undefined {
  const suffix = FOUNDRY_PLATFORMS.get(`${platform}-${arch}`)
  return suffix ? `@foundry-rs/${tool}-${suffix}` : undefined
}

/** `from`: a folder whose node_modules to search instead of this tree's (tests install other platforms there). */
export function foundryBinary(tool: FoundryTool, platform: string = process.platform, arch: string = process.arch, from?: string): FoundryBinary {
  const packageName = foundryPackageName(tool, platform, arch)
  if (!packageName) return { path: undefined, reason: `no ${tool} binary: Foundry publishes none for ${platform}-${arch}` }
  let dir: string
  try {
    dir = dirname(require.resolve(`${packageName}/package.json`, from ? { paths: [from] } : undefined))
  } catch {
    return { path: undefined, reason: `no ${tool} binary: ${packageName} is not installed (run npm ci; npm installs it as an optional dependency of @foundry-rs/${tool})` }
  }
  const path = join(dir, 'bin', platform === 'win32' ? `${tool}.exe` : tool)
  if (!existsSync(path)) return { path: undefined, reason: `no ${tool} binary: ${path} is missing` }
  return { path, packageName }
}
