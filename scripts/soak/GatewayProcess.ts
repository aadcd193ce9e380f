/** One soak gateway: `node --import tsx src/main.ts` on a fixed port and identity, killed (-9) and restarted at will. */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'

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
  ) {}

  get output(): string {
    return this.#output
  }

  async start(timeoutMs = 120_000): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start:\n${this.#output.slice(-3000)}`)), timeoutMs)
      const onData = () => {
        if (/gateway listening/.test(this.#output.slice(-5000))) {
          clearTimeout(timer)
          child.stdout!.off('data', onData)
          resolve()
        }
      }
      this.#output = ''
      child.stdout!.on('data', onData)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`${this.name} exited ${code}:\n${this.#output.slice(-3000)}`))
      })
    })
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
