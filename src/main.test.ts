import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../scripts/nodeArgsFor.js'

const root = path.resolve(import.meta.dirname, '..')

describe('src/main.ts', () => {
  it('starts on the configured port, gates /journal, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
    // node itself (the compiled build when it is up to date, else tsx's loader), not the tsx CLI: the CLI is a second
    // process that relays signals, and under load it was once terminated by the SIGTERM itself (exit 143) before it
    // knew its child handles SIGTERM. Production (`npm run serve`) is node running main directly too.
    const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
      cwd: root,
      env: { ...process.env, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
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
      // 'close' (not 'exit'): stdout is fully read by then.
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(output).toContain('"msg":"stopped"')
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('exits promptly on SIGTERM after its stdout and stderr are gone (a dead parent), instead of hanging in the final log flush', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-main-'))
    const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
      cwd: root,
      env: { ...process.env, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
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
      const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
        cwd: root,
        env: {
          ...process.env,
          SERVICE_PORT: '0',
          SERVICE_HOST: '127.0.0.1',
          SERVICE_DATA_DIR: dataDir,
          SHADOW_OVERLORD_ADDRESS: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          SHADOW_JWT_SECRET: secret,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      try {
        const outcome = await new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve('still running after 60 s'), 60_000)
          child.stdout.on('data', () => output.includes('gateway listening') && (clearTimeout(timer), resolve('listening')))
          child.once('close', (code) => (clearTimeout(timer), resolve(`exit ${code}`)))
        })
        expect(outcome, output).toBe('exit 1')
        expect(output).toMatch(/SHADOW_JWT_SECRET .*(hex of text|counting sequence).*openssl rand -hex 32/)
        expect(output).not.toContain(secret)
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  })
})
