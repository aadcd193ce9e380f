/** HAProxy in front of the soak's gateways: a generated config, the Debian binary, health checks every 500 ms. */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const HAPROXY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy'

export function haproxyConfig(frontPort: number, backends: number[]): string {
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 300s',
    '  timeout server 300s',
    // a request whose instance died before answering is not retried (it may have paid): the client sees it
    '  retries 1',
    '  option redispatch',
    'frontend soak',
    `  bind 127.0.0.1:${frontPort}`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk GET /health',
    ...backends.map((port, i) => `  server gw${i} 127.0.0.1:${port} check inter 500 fall 1 rise 1`),
    '',
  ].join('\n')
}

export async function startHaproxy(dir: string, frontPort: number, backends: number[]): Promise<{ child: ChildProcess; close: () => Promise<void> }> {
  if (!existsSync(HAPROXY)) throw new Error(`HAProxy not found at ${HAPROXY} (apt-get install haproxy, or set HAPROXY_BIN)`)
  const file = join(dir, 'haproxy.cfg')
  writeFileSync(file, haproxyConfig(frontPort, backends))
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr!.on('data', (c) => (err += c))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  // ready when the front port answers
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${err}`)
    try {
      await fetch(`http://127.0.0.1:${frontPort}/health`, { signal: AbortSignal.timeout(1000) })
      break
    } catch {
      if (Date.now() > deadline) throw new Error(`haproxy did not start: ${err}`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  return {
    child,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
