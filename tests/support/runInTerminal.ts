import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'

const run = promisify(execFile)

export type TerminalRun = {
  /** What the terminal shows, scroll-back included, one entry per line as displayed; a line the terminal wrapped is joined back (so it is longer than the width). */
  lines: string[]
  code: number
  /** From the start of the terminal to the command's end. */
  ms: number
}

/**
 * Runs `command` (a shell command line) in a real terminal of `cols` columns: a detached tmux session on a
 * private socket, so the program sees a TTY of that size (`process.stdout.columns`) and its escape sequences
 * are interpreted as a terminal does. Returns the screen as the user would read it afterwards. A command
 * still running after `timeoutMs` (default 120 s) fails the call with the screen as it was then.
 */
export async function runInTerminal(command: string, options: { cols: number; rows?: number; cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<TerminalRun> {
  const socket = `pay2store-test-${process.pid}-${randomBytes(4).toString('hex')}`
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }
  delete env.TMUX // a test run from inside tmux must not talk to the user's server
  const timeoutMs = options.timeoutMs ?? 120_000
  const tmux = (args: string[], timeout = 30_000) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env, cwd: options.cwd, timeout })
  const script = `${command}; echo "[exit $?]"; tmux -L ${socket} wait-for -S done; sleep 60`
  const screen = async () => {
    const { stdout } = await tmux(['capture-pane', '-p', '-J', '-S', '-', '-E', '-'])
    const lines = stdout.split('\n').map((l) => l.trimEnd())
    while (lines.length > 0 && lines.at(-1) === '') lines.pop()
    return lines
  }
  const t0 = Date.now()
  await tmux(['new-session', '-d', '-x', String(options.cols), '-y', String(options.rows ?? 50), '-c', options.cwd, script])
  try {
    const finished = await tmux(['wait-for', 'done'], timeoutMs).then(
      () => true,
      () => false,
    )
    const ms = Date.now() - t0
    const lines = await screen()
    const exit = lines.findLastIndex((l) => /^\[exit \d+\]$/.test(l))
    if (!finished || exit < 0) throw new Error(`the command did not finish in the terminal within ${timeoutMs} ms:\n${lines.join('\n')}`)
    return { lines: lines.slice(0, exit), code: Number(lines[exit]!.slice(6, -1)), ms }
  } finally {
    await tmux(['kill-server']).catch(() => {})
  }
}
