// Removes from a production install what only building needed (Containerfile's deps stage, and the production
// install test, which measures what the image holds): better-sqlite3's C sources and the objects of its build.
// It loads build/Release/better_sqlite3.node alone at run time. And TypeScript: viem, ox, abitype and node-llama-cpp
// name it as an optional peer (for their types), so the lock marks it devOptional and `npm ci --omit=dev` still
// installs it (24 MB); nothing loads it at run time. Usage: node deploy/pruneProductionInstall.mjs [app dir]
import { rmSync } from 'node:fs'
import { join } from 'node:path'

const app = process.argv[2] ?? process.cwd()
const sqlite = join(app, 'node_modules', 'better-sqlite3')
for (const leftover of ['deps', 'src', 'build/Release/obj', 'build/Release/obj.target', 'build/Release/.deps', 'build/Release/sqlite3.a', 'build/Release/test_extension.node', 'build/deps']) {
  rmSync(join(sqlite, leftover), { recursive: true, force: true })
}
rmSync(join(app, 'node_modules', 'typescript'), { recursive: true, force: true })
rmSync(join(app, 'node_modules', '.bin', 'tsc'), { force: true })
rmSync(join(app, 'node_modules', '.bin', 'tsserver'), { force: true })
