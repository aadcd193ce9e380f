/**
 * HAProxy in front of the soak's gateways (and the rolling-restart test's): a generated config of the shape of
 * deploy/haproxy.cfg, the Debian binary, a readiness check (`GET /health/ready`, 503 from a replica's stop signal on
 * and while a capability it is configured for is down) every `checkMs` (500 ms), down after two failed checks, up
 * after one good one; when no replica passes it (a dependency they all share is down), every replica that passes
 * `GET /health/ready?require=none` serves. A check may take up to 5 s: on a loaded machine a busy replica answers a
 * probe slower than the check interval, and slow answers marking every replica down at once are a 503 for everyone.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const HAPROXY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy'

export function haproxyConfig(frontPort: number, backends: number[], checkMs = 500): string {
  const servers = (prefix: string) => backends.map((port, i) => `  server ${prefix}${i} 127.0.0.1:${port} check inter ${checkMs} fall 2 rise 1`)
  return [
    'global',
    '  maxconn 2000',
    // abnormal requests only (5xx, no answer, aborts, retries), one line each on stderr, for the soak's report
    '  log stderr format raw local0',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  timeout connect 2s',
    '  timeout client 300s',
    '  timeout server 300s',
    '  timeout check 5s',
    // a request whose instance died before answering is not retried (it may have paid): the client sees it
    '  retries 1',
    '  option redispatch',
    'frontend soak',
    `  bind 127.0.0.1:${frontPort}`,
    '  use_backend gateways_degraded if { nbsrv(gateways) eq 0 }',
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    // readiness, not liveness: a draining replica (SIGTERM) gets no new request once a check has seen it
    '  option httpchk GET /health/ready',
    '  http-check expect status 200',
    ...servers('gw'),
    'backend gateways_degraded',
    '  balance roundrobin',
    '  option httpchk GET /health/ready?require=none',
    '  http-check expect status 200',
    ...servers('any'),
    '',
  ].join('\n')
}

export type Haproxy = {
  child: ChildProcess
  /** HAProxy's log so far, its lines about the gateways: abnormal requests (httplog format, whose termination
   * state says who cut what) and servers marked down or up. */
  log: () => string[]
  close: () => Promise<void>
}

export async function startHaproxy(dir: string, frontPort: number, backends: number[], checkMs = 500): Promise<Haproxy> {
  return runHaproxy(dir, frontPort, haproxyConfig(frontPort, backends, checkMs))
}

/** HAProxy with `config` (written to `<dir>/haproxy.cfg`), once its front port on 127.0.0.1 answers. */
export async function runHaproxy(dir: string, frontPort: number, config: string): Promise<Haproxy> {
  if (!existsSync(HAPROXY)) throw new Error(`HAProxy not found at ${HAPROXY} (apt-get install haproxy, or set HAPROXY_BIN)`)
  const file = join(dir, 'haproxy.cfg')
  writeFileSync(file, config)
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
    log: () => err.split('\n').filter((l) => / gateways(_degraded)?\//.test(l) || l.includes('<NOSRV>')),
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
