import { main } from '../../src/cli/main.js'

export type CliRun = { code: number; out: string; err: string; json: any }

/** Runs the CLI in-process with `env` added; returns its exit code, what it wrote, and stdout parsed as JSON if it is. */
export async function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const saved = { out: process.stdout.write, err: process.stderr.write, env: { ...process.env } }
  let out = ''
  let err = ''
  process.stdout.write = ((c: string | Uint8Array) => ((out += c.toString()), true)) as typeof process.stdout.write
  process.stderr.write = ((c: string | Uint8Array) => ((err += c.toString()), true)) as typeof process.stderr.write
  Object.assign(process.env, env)
  try {
    const code = await main(args)
    let json: unknown
    try {
      json = JSON.parse(out)
    } catch {
      json = undefined
    }
    return { code, out, err, json }
  } finally {
    process.stdout.write = saved.out
    process.stderr.write = saved.err
    for (const k of Object.keys(env)) if (!(k in saved.env)) delete process.env[k]
  }
}
