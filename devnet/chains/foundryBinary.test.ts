/** Which Foundry package and binary each platform gets, and the one-line reason where there is none. */
import { accessSync, constants } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { foundryBinary, foundryPackageName } from './foundryBinary.js'

describe('foundryBinary', () => {
  it('names the per-platform package npm installs for each platform Foundry builds', () => {
    expect(foundryPackageName('anvil', 'darwin', 'arm64')).toBe('@foundry-rs/anvil-darwin-arm64')
    expect(foundryPackageName('anvil', 'darwin', 'x64')).toBe('@foundry-rs/anvil-darwin-amd64')
    expect(foundryPackageName('forge', 'linux', 'arm64')).toBe('@foundry-rs/forge-linux-arm64')
    expect(foundryPackageName('forge', 'linux', 'x64')).toBe('@foundry-rs/forge-linux-amd64')
    expect(foundryPackageName('anvil', 'freebsd', 'x64')).toBeUndefined()
    expect(foundryPackageName('anvil', 'linux', 'ppc64')).toBeUndefined()
  })

  it("finds this machine's anvil and forge as executables", () => {
    for (const tool of ['anvil', 'forge'] as const) {
      const found = foundryBinary(tool)
      if (found.path === undefined) throw new Error(found.reason)
      expect(found.packageName).toBe(foundryPackageName(tool))
      accessSync(found.path, constants.X_OK)
    }
  })

  it('says in one line why there is no binary: a platform without a build, or a package npm left out', () => {
    const none = foundryBinary('anvil', 'freebsd', 'x64')
    expect(none).toEqual({ path: undefined, reason: 'no anvil binary: Foundry publishes none for freebsd-x64' })
    // linux-arm64's package is never installed on this x64 machine: npm skips it by its `cpu`
    const missing = foundryBinary('forge', 'linux', 'arm64')
    expect(missing.path).toBeUndefined()
    expect(missing.path === undefined && missing.reason).toMatch(/^no forge binary: @foundry-rs\/forge-linux-arm64 is not installed \(.*\)$/)
    expect(missing.path === undefined && missing.reason.includes('\n')).toBe(false)
  })
})
