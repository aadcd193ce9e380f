/**
 * The environment of whatever runs on `npm start`'s devnet (the servers it starts, `npm run batch`): the
 * gateway settings the devnet wrote in `<data dir>/devnet.json` (`env`, docs/design.md's names), then the
 * caller's own values, then the caller's environment, which wins — as everywhere, a setting given is a setting kept.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const devnetFileOf = (dataDir: string) => join(dataDir, 'devnet.json')

/** devnet.json's `env`, or undefined when the file is absent or unreadable. */
export function readDevnetEnv(dataDir: string): Record<string, string> | undefined {
  try {
    return (JSON.parse(readFileSync(devnetFileOf(dataDir), 'utf8')) as { env?: Record<string, string> }).env
  } catch {
    return undefined
  }
}

export function withDevnetEnv(devnetEnv: Record<string, string>, own: Record<string, string>, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...devnetEnv, ...own, ...env }
}
