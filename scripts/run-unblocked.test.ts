import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const relay = join(import.meta.dirname, 'run-unblocked.mjs')
const dir = mkdtempSync(join(tmpdir(), 'run-unblocked-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * A command that writes 1 MiB of numbered lines to stdout and 100 KiB to stderr, then leaves a file and exits 3. Like
 * vitest's main process it has started a child that shares its stdout: libuv makes a descriptor a child inherits
 * blocking, and O_NONBLOCK belongs to the pipe, not the process — from then on the parent's writes to a full pipe
 * wait for the reader.
 */
function writer(done: string): string[] {
  const code = `
    const fs = require('node:fs')
    process.stdout.write('')
    require('node:child_process').spawnSync('true', { stdio: 'inherit' })
    for (let i = 0; i < 16384; i++) process.stdout.write(String(i).padStart(63, '0') + '\\n')
    process.stderr.write('e'.repeat(100 * 1024))
    fs.writeFileSync(${JSON.stringify(done)}, '')
    process.exitCode = 3`
  return [process.execPath, '-e', code]
}

/**
 * Runs `argv` with its stdout going into an OS pipe whose reader (a shell, as a CI harness would be) does not read
 * for `stallMs`, then copies it to a file; its stderr goes to a file. Says whether the command got to its end while
 * nobody was reading. (Files, not pipes back to this process: a loaded test process reads late, and a writer
 * meeting a full non-blocking pipe fails with EAGAIN — `cat` exiting 1, as seen under load.)
 */
async function runWithStalledReader(argv: string[], done: string, stallMs: number) {
  const out = `${done}.out`
  const err = `${done}.err`
  const script = `set -o pipefail; "$@" 2>"$ERR" | { sleep ${stallMs / 1000}; cat >"$OUT"; }`
  const proc = spawn('bash', ['-c', script, 'bash', ...argv], { stdio: 'ignore', env: { ...process.env, OUT: out, ERR: err } })
  const t0 = Date.now()
  let doneAfter = Number.POSITIVE_INFINITY
  const watch = setInterval(() => {
    if (doneAfter === Number.POSITIVE_INFINITY && existsSync(done)) doneAfter = Date.now() - t0
  }, 20)
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve))
  clearInterval(watch)
  return { finishedUnread: doneAfter < stallMs, code, stdout: readFileSync(out, 'utf8'), stderr: readFileSync(err, 'utf8') }
}

describe('run-unblocked (npm test runs vitest through it)', () => {
  it('a reader that stops reading blocks a command writing straight to the pipe (what the relay is for)', async () => {
    const done = join(dir, 'direct')
    const r = await runWithStalledReader(writer(done), done, 3_000)
    expect(r.finishedUnread).toBe(false)
    expect(r.code).toBe(3)
  })

  it('through the relay the command runs to its end while nobody reads; then every byte arrives in order, with its exit code', async () => {
    const done = join(dir, 'relayed')
    const r = await runWithStalledReader([process.execPath, relay, ...writer(done)], done, 10_000)
    expect(r.finishedUnread).toBe(true)
    expect(r.code).toBe(3)
    const lines = r.stdout.split('\n')
    expect(lines).toHaveLength(16385)
    expect(lines.slice(0, -1).every((line, i) => line === String(i).padStart(63, '0'))).toBe(true)
    expect(r.stderr).toBe('e'.repeat(100 * 1024))
  })

  it('a command that cannot start exits 127 with its name on stderr; a signal is passed on', async () => {
    const missing = await runWithStalledReader([process.execPath, relay, 'no-such-command-xyz'], join(dir, 'never'), 0)
    expect(missing.code).toBe(127)
    expect(missing.stderr).toContain('no-such-command-xyz')

    const proc = spawn(process.execPath, [relay, process.execPath, '-e', 'setInterval(() => {}, 1000); console.log("up")'], { stdio: ['ignore', 'pipe', 'pipe'] })
    await new Promise((resolve) => proc.stdout.once('data', resolve))
    proc.kill('SIGTERM')
    expect(await new Promise((resolve) => proc.once('close', resolve))).toBe(143)
  })
})
