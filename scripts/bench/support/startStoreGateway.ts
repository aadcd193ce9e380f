import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** storeUpload.ts run as `--gateway`: the gateway's storage path (StorageService behind a bare HTTP server). */
const gatewayScript = fileURLToPath(new URL('../storeUpload.ts', import.meta.url))

/**
 * Starts the storage-path gateway of the store benchmarks in a child process (with `nodeFlags`, e.g.
 * `--expose-gc` for its RSS sampling), stopped first at cleanup; resolves to its origin once it is listening.
 */
export async function startStoreGateway(env: NodeJS.ProcessEnv, cleanup: (() => Promise<unknown>)[], nodeFlags: string[] = []): Promise<string> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', gatewayScript, '--gateway'], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  cleanup.unshift(async () => {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
  })
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}`)))
  })
  return env.SERVICE_PUBLIC_ORIGIN as string
}
