/**
 * One soak gateway: `src/main.ts` (from the compiled build when it is up to date: `nodeArgsFor.ts`) on a fixed port and identity, killed (-9) and restarted at
 * will. The soak's model server runs the same way (`entry` src/modelserver/main.ts, ready on `/`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { nodeArgsFor } from '../nodeArgsFor.js'

const root = path.resolve(import.meta.dirname, '..', '..')

export class GatewayProcess {
  child: ChildProcess | undefined
  /** One RSS series (kB) per process lifetime. */
  readonly lifetimes: { pid: number; startedAt: number; endedAt?: number; rssKb: number[] }[] = []
  #output = ''

  constructor(
    readonly name: string,
    readonly port: number,
    readonly env: Record<string, string>,
    readonly entry = 'src/main.ts',
    readonly readyPath = '/health',
  ) {}

  get output(): string {
    return this.#output
  }

  async start(timeoutMs = 300_000): Promise<void> {
    const child = spawn(process.execPath, nodeArgsFor(this.entry), {
      cwd: root,
      env: { ...process.env, ...this.env, SERVICE_HOST: '127.0.0.1', SERVICE_PORT: String(this.port), SERVICE_INSTANCE_ID: this.name },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child = child
    const keep = (c: Buffer) => {
      this.#output = (this.#output + c.toString()).slice(-200_000)
    }
    child.stdout!.on('data', keep)
    child.stderr!.on('data', keep)
    // ready when it answers its ready path on its port (its log level may hide the listening line)
    let exited = false
    child.once('exit', () => (exited = true))
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (exited) throw new Error(`${this.name} exited:\n${this.#output.slice(-3000)}`)
      if (Date.now() > deadline) throw new Error(`${this.name} did not start:\n${this.#output.slice(-3000)}`)
      const ok = await fetch(`http://127.0.0.1:${this.port}${this.readyPath}`, { signal: AbortSignal.timeout(1000) })
        .then((r) => r.status === 200)
        .catch(() => false)
      if (ok) break
      await new Promise((r) => setTimeout(r, 250))
    }
    this.lifetimes.push({ pid: child.pid!, startedAt: Date.now(), rssKb: [] })
  }

  sampleRss(): void {
    const pid = this.child?.pid
    const life = this.lifetimes.at(-1)
    if (!pid || !life || life.endedAt) return
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
      if (kb) life.rssKb.push(kb)
    } catch {
      // gone
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    child.kill(signal)
    await exited
    const life = this.lifetimes.at(-1)
    if (life) life.endedAt = Date.now()
  }
}
