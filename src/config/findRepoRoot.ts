import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root (holds `openapi/`), found from this file both under `src/` and `dist/src/`. */
export function findRepoRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start
  for (;;) {
    if (existsSync(join(dir, 'openapi', 'gateway.yaml'))) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error('openapi/gateway.yaml not found above ' + start)
    dir = parent
  }
}
