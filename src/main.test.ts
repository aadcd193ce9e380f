import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../scripts/nodeArgsFor.js'

const root = path.resolve(import.meta.dirname, '..')

/** Runs main with `env` until it exits or says it listens; the outcome and everything it wrote. */
async function run(env: Record<string, string | undefined>): Promise<{ outcome: string; output: string }> {
  const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  try {
    const outcome = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('still running after 120 s'), 120_000)
      child.stdout.on('data', () => output.includes('gateway listening') && (clearTimeout(timer), resolve('listening')))
      child.once('close', (code) => (clearTimeout(timer), resolve(`exit ${code}`)))
    })
    return { outcome, output }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((r) => child.once('close', r))
      child.kill('SIGTERM')
      await closed
    }
  }
}

describe('src/main.ts', () => {
  it('starts on the configured port (taking over the lock a dead process left), gates /journal, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
    // an npm start killed outright (SIGKILL, a crash) left its lock: its pid runs no more
    const dead = spawn(process.execPath, ['-e', ''])
    await new Promise((r) => dead.once('exit', r))
    writeFileSync(path.join(dataDir, 'in-use.json'), JSON.stringify({ pid: dead.pid, program: 'npm start', startedAt: Date.now(), dataDir, ports: [] }))
    // node itself (the compiled build when it is up to date, else tsx's loader), not the tsx CLI: the CLI is a second
    // process that relays signals, and under load it was once terminated by the SIGTERM itself (exit 143) before it
    // knew its child handles SIGTERM. Production (`npm run serve`) is node running main directly too.
    const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
      cwd: root,
      env: { ...process.env, SERVICE_PROFILE: 'devnet', SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${output}`)), 60_000)
        child.stdout.on('data', () => {
          const match = /gateway listening on http:\/\/localhost:(\d+)/.exec(output)
          if (match) {
            clearTimeout(timer)
            resolve(Number(match[1]))
          }
        })
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)))
      })
      const res = await fetch(`http://127.0.0.1:${port}/journal`, { headers: { accept: 'text/html' }, redirect: 'manual' })
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toBe('/login?from=%2Fjournal')
      const lock = JSON.parse(readFileSync(path.join(dataDir, 'in-use.json'), 'utf8')) as { pid: number; program: string; ports: { port: number }[] }
      expect(lock).toMatchObject({ pid: child.pid, program: 'gateway', ports: [{ port, service: 'the gateway' }] })
      // 'close' (not 'exit'): stdout is fully read by then.
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(output).toContain('"msg":"stopped"')
      expect(existsSync(path.join(dataDir, 'in-use.json'))).toBe(false) // a clean stop leaves no lock
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('exits promptly on SIGTERM after its stdout and stderr are gone (a dead parent), instead of hanging in the final log flush', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
    const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
      cwd: root,
      env: { ...process.env, SERVICE_PROFILE: 'devnet', SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${output}`)), 60_000)
        child.stdout.on('data', () => {
          if (output.includes('gateway listening')) {
            clearTimeout(timer)
            resolve()
          }
        })
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)))
      })
      // The reading ends close, as when the parent dies: every later write gets EPIPE.
      child.stdout.destroy()
      child.stderr.destroy()
      const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`${code ?? signal}`)))
      const started = Date.now()
      child.kill('SIGTERM')
      const outcome = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 5 s'), 5_000))])
      expect(outcome).toBe('0')
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('refuses to start with a weak SHADOW_JWT_SECRET (the hex of a passphrase, counting bytes): exit 1, the variable and how to make one', async () => {
    const weak = [Buffer.from('my-company-jwt-secret-2024-prod!').toString('hex'), Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex')]
    for (const secret of weak) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
      try {
        const { outcome, output } = await run({
          ...process.env,
          SERVICE_PROFILE: 'devnet',
          SERVICE_PORT: '0',
          SERVICE_HOST: '127.0.0.1',
          SERVICE_DATA_DIR: dataDir,
          SHADOW_OVERLORD_ADDRESS: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          SHADOW_JWT_SECRET: secret,
        })
        expect(outcome, output).toBe('exit 1')
        expect(output).toMatch(/SHADOW_JWT_SECRET .*(hex of text|counting sequence).*openssl rand -hex 32/)
        expect(output).not.toContain(secret)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  })

  describe('a data directory another process runs on', () => {
    /** A live process whose command line reads as `program`'s (what /proc shows of npm start or of a gateway). */
    const livePretending = (program: string) => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)', path.join(root, program)], { stdio: 'ignore' })

    for (const [program, script, name] of [
      ['npm start', 'scripts/start.ts', 'npm start'],
      ['gateway', 'src/main.ts', 'a gateway \\(npm run serve\\)'],
    ] as const) {
      it(`held by ${program}: refused at once, naming it with its pid and port, its lock left alone`, async () => {
        const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-held-'))
        const holder = livePretending(script)
        try {
          const lock = { pid: holder.pid, program, startedAt: Date.now(), dataDir, ports: [{ port: 8000, service: 'the gateway', url: 'http://127.0.0.1:8000' }] }
          writeFileSync(path.join(dataDir, 'in-use.json'), JSON.stringify(lock))
          const started = Date.now()
          const { outcome, output } = await run({ ...process.env, SERVICE_PROFILE: 'devnet', SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir })
          expect(outcome, output).toBe('exit 1')
          // before the gateway's modules load (~4 s through tsx on an idle 2-vCPU machine; ~0.5 s refused): the bound
          // leaves room for a loaded machine, the database never opened (below) is what shows the order
          expect(Date.now() - started, output).toBeLessThan(10_000)
          expect(output).toMatch(new RegExp(`^${name} is already running on this data directory \\(${dataDir}\\): pid ${holder.pid}, up since `, 'm'))
          expect(output).toContain('\n  8000   the gateway http://127.0.0.1:8000\n')
          expect(output).toContain(`kill ${holder.pid}`)
          expect(existsSync(path.join(dataDir, 'gateway.sqlite'))).toBe(false) // the database was never opened
          expect(JSON.parse(readFileSync(path.join(dataDir, 'in-use.json'), 'utf8'))).toEqual(lock)
        } finally {
          holder.kill('SIGKILL')
          rmSync(dataDir, { recursive: true, force: true })
        }
      })
    }
  })

  describe('a production start never falls back to the devnet', () => {
    /** The process's environment without any setting of the gateway (what `npm run serve` sees on a bare machine). */
    const bare = () =>
      Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(SERVICE_|SHADOW_|FACILITATOR_|MODELSERVER_|DEVNET_)/.test(name)))

    it('refuses to start without configuration, naming the settings to set and the devnet profile; the same with SERVICE_PROFILE=devnet starts', async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
      try {
        const listen = { SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1' }
        const [refused, partial, devnetDir, devnet] = await Promise.all([
          run({ ...bare(), ...listen }),
          // paid storage half configured: each of its addresses must be given, none is the devnet's
          run({ ...bare(), ...listen, SERVICE_DATA_DIR: dataDir, SERVICE_X402__PAY_TO_EVM: '0x52908400098527886E0F7030069857D2E4169EE7' }),
          // everything a production start needs, but in a data directory that holds a devnet (npm start's)
          (async () => {
            const shared = mkdtempSync(path.join(tmpdir(), 'gw-main-devnet-'))
            writeFileSync(path.join(shared, 'devnet.json'), '{}')
            try {
              return await run({ ...bare(), ...listen, SERVICE_DATA_DIR: shared, SERVICE_PUBLIC_ORIGIN: 'https://store.example.com', SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9' })
            } finally {
              rmSync(shared, { recursive: true, force: true })
            }
          })(),
          run({ ...bare(), ...listen, SERVICE_PROFILE: 'devnet', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
        ])
        expect(refused.outcome, refused.output).toBe('exit 1')
        for (const name of ['SERVICE_DATA_DIR', 'SERVICE_PUBLIC_ORIGIN', 'SERVICE_LLM__MODELSERVER__BASE_URL']) expect(refused.output).toMatch(new RegExp(`^  ${name} — `, 'm'))
        expect(refused.output).toContain('SERVICE_PROFILE=devnet')
        expect(partial.outcome, partial.output).toBe('exit 1')
        for (const name of ['SERVICE_X402__FACILITATOR_URL', 'SERVICE_ALGOD__URL', 'SERVICE_STORAGE__PAYMENT_URL', 'SERVICE_STORAGE__UPLOAD_URL', 'SERVICE_STORAGE__GATEWAY_URL']) {
          expect(partial.output).toMatch(new RegExp(`^  ${name} — .*devnet: http://127\\.0\\.0\\.1:84\\d\\d`, 'm'))
        }
        expect(devnetDir.outcome, devnetDir.output).toBe('exit 1')
        expect(devnetDir.output).toMatch(/holds a devnet's state \(devnet\.json\)/)
        expect(devnet.outcome, devnet.output).toBe('listening')
        expect(devnet.output).toMatch(/"profile":"devnet"/)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }, 180_000) // four processes at once: minutes on a machine others load
  })
})
