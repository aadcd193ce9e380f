/**
 * Starts the Anvil binary of this platform's `@foundry-rs/anvil-*` package (foundryBinary.ts; the binary itself, never `npx anvil`,
 * which leaves an orphan on SIGTERM). Port 0 picks a free port: Anvil prints `Listening on host:port`.
 * Readiness is a plain-fetch poll of `eth_chainId`. `close()` sends SIGTERM, then SIGKILL after 2 s; an
 * exit hook kills any child still running if the parent process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { foundryBinary } from './foundryBinary.js'

/** This platform's Anvil binary; throws the one-line reason where there is none. */
export function anvilBinary(): string {
  const anvil = foundryBinary('anvil')
  if (anvil.path === undefined) throw new Error(anvil.reason)
  return anvil.path
}

export interface AnvilOptions {
  port?: number
  host?: string
  chainId: number
  /** Interval mining in seconds (default: automine each transaction). */
  blockTime?: number
  accounts?: number
  balanceEth?: number
}

export interface AnvilInstance {
  url: string
  port: number
  chainId: number
  pid: number
  close(): Promise<void>
}

const live = new Set<{ sh: ChildProcess; anvilPid?: number }>()
let hooked = false
function hookExit(): void {
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const c of live) {
      for (const pid of [c.anvilPid, c.sh.pid]) {
        try {
          if (pid) process.kill(pid, 'SIGKILL')
        } catch {
          /* already gone */
        }
      }
    }
  })
}

export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await res.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

export async function startAnvil(opts: AnvilOptions): Promise<AnvilInstance> {
  hookExit()
  const host = opts.host ?? '127.0.0.1'
  const args = [
    '--host', host,
    '--port', String(opts.port ?? 0),
    '--chain-id', String(opts.chainId),
    '--accounts', String(opts.accounts ?? 10),
    '--balance', String(opts.balanceEth ?? 10000),
  ]
  if (opts.blockTime) args.push('--block-time', String(opts.blockTime))
  // $0 = anvil binary, "$@" = its arguments. Prints Anvil's pid on stderr; a reader stops Anvil at stdin EOF
  // (this process gone). The watchdog exits with Anvil, so an Anvil that dies at once (its port taken) is
  // an exit here, not a wait. (An asynchronous list reads /dev/null unless given stdin: hence fd 3.)
  const watchdog =
    'exec 3<&0; "$0" "$@" & pid=$!; echo "ANVIL_PID=$pid" >&2; ' +
    'trap \'kill -TERM $pid 2>/dev/null; wait $pid; kill $reader 2>/dev/null; exit 0\' TERM INT HUP; ' +
    '{ while read -r _; do :; done; kill -TERM $pid 2>/dev/null; } <&3 & reader=$!; ' +
    'wait $pid; code=$?; kill $reader 2>/dev/null; exit $code'
  const child = spawn('/bin/sh', ['-c', watchdog, anvilBinary(), ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const entry: { sh: ChildProcess; anvilPid?: number } = { sh: child }
  live.add(entry)
  let exited = false
  const exitP = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true
      live.delete(entry)
      resolve()
    }),
  )

  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    let err = ''
    const onOut = (c: Buffer): void => {
      out += c.toString()
      const m = /Listening on [^\s:]+:(\d+)/.exec(out)
      if (m) {
        child.stdout?.off('data', onOut)
        child.stdout?.resume() // keep draining the per-call log
        resolve(Number(m[1]))
      }
    }
    child.stdout?.on('data', onOut)
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString()
      const m = /ANVIL_PID=(\d+)/.exec(err)
      if (m && !entry.anvilPid) entry.anvilPid = Number(m[1])
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`anvil exited (${code}) before listening on port ${opts.port ?? 0}: ${err.replace(/^ANVIL_PID=\d+\n/m, '').trim() || out.slice(-500)}`)))
  })
  child.stderr?.resume()

  const url = `http://${host}:${port}`
  const deadline = Date.now() + 15_000
  for (;;) {
    try {
      const id = await rpc<string>(url, 'eth_chainId')
      if (Number(id) !== opts.chainId) throw new Error(`anvil on ${url} reports chain ${Number(id)}`)
      break
    } catch (e) {
      if ((e as Error).message.includes('reports chain')) throw e
      if (Date.now() > deadline || exited) {
        child.stdin?.end()
        throw new Error(`anvil on ${url} not ready: ${(e as Error).message}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  let closing: Promise<void> | undefined
  return {
    url,
    port,
    chainId: opts.chainId,
    get pid() {
      return entry.anvilPid ?? (child.pid as number)
    },
    close: () =>
      (closing ??= (async () => {
        if (exited) return
        child.stdin?.end() // the watchdog stops Anvil and exits
        const t = setTimeout(() => {
          for (const pid of [entry.anvilPid, child.pid]) {
            try {
              if (pid) process.kill(pid, 'SIGKILL')
            } catch {
              /* gone */
            }
          }
        }, 3_000)
        await exitP
        clearTimeout(t)
      })()),
  }
}
