import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

/** `--trace`: the Node flags that load the preload timing each proxied call (`traceProxyTimes.mjs`) into a process. */
export function traceFlags(traceFile: string | undefined): string[] {
  return traceFile ? ['--import', pathToFileURL(path.join(here, 'traceProxyTimes.mjs')).href] : []
}

/** The bare reverse proxy (`bareProxy.mjs`) in a child process, in front of `target`; with `traceFile`, traced. */
export async function startBareProxy(target: string, traceFile?: string) {
  const child = spawn(process.execPath, [...traceFlags(traceFile), path.join(here, 'bareProxy.mjs')], {
    env: { ...process.env, TARGET: target, ...(traceFile ? { TRACE_FILE: traceFile } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((r) => child.once('exit', r))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve((JSON.parse(d.toString()) as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`bare proxy exited with ${code}`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
}
