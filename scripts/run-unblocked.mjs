/**
 * `node scripts/run-unblocked.mjs <command> [args...]`: runs the command with its output relayed, so that a reader
 * who stops reading (a CI harness busy elsewhere) never stops the command itself. `npm test` runs vitest through it.
 *
 * Why: vitest's main process starts children that share its stdout, and libuv makes a descriptor a child inherits
 * blocking — for the pipe itself, so for the parent too. When whoever reads our output pauses and the pipe's 64 KiB
 * fill up, vitest's main process blocks in `write` — and with it the answers to its workers, which give up after
 * 60 s ("[vitest-worker]: Timeout calling "onTaskUpdate"", one error per pending call, tests left unreported).
 * Reproduced with a reader paused for 100 s; a worker that holds its own event loop past 60 s fails the same way,
 * which the relay cannot help (docs/testing.md, "Speed": stalls). The command's output is
 * read as it comes and queued in memory; it is written on from libuv's thread pool (`fs.write`), which may block
 * there as long as it likes while this event loop keeps reading. Nothing is dropped and the order of each stream is
 * kept; this process exits with the command's code once everything is written.
 *
 * Plain Node with no dependency, like run-parallel.mjs.
 */
import { spawn } from 'node:child_process'
import { write } from 'node:fs'
import { constants } from 'node:os'
import { isatty } from 'node:tty'

const [command, ...args] = process.argv.slice(2)
if (!command) {
  console.error('usage: node scripts/run-unblocked.mjs <command> [args...]')
  process.exit(2)
}

/** A queue of chunks written to `fd` one at a time, off the event loop. */
function relayTo(fd) {
  const chunks = []
  let writing = false
  let idle = () => {}
  const next = () => {
    const chunk = chunks.shift()
    if (!chunk) {
      writing = false
      return idle()
    }
    writing = true
    write(fd, chunk, 0, chunk.length, null, (error, written) => {
      // EAGAIN: the descriptor is non-blocking and full (someone else set O_NONBLOCK on a shared pipe); try again shortly.
      if (error?.code === 'EAGAIN') return void setTimeout(() => (chunks.unshift(chunk), next()), 10)
      // EPIPE and the like: the reader is gone; keep draining the command's output so that it is not blocked either.
      if (!error && written < chunk.length) chunks.unshift(chunk.subarray(written))
      next()
    })
  }
  return {
    push(chunk) {
      chunks.push(chunk)
      if (!writing) next()
    },
    drained: () => new Promise((resolve) => (writing ? (idle = resolve) : resolve())),
  }
}

const out = relayTo(1)
const err = relayTo(2)
// The command sees pipes; keep its colours when our own output is a terminal.
const env = isatty(1) && process.env.NO_COLOR === undefined ? { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' } : process.env
const child = spawn(command, args, { stdio: ['inherit', 'pipe', 'pipe'], env })
child.stdout.on('data', (c) => out.push(c))
child.stderr.on('data', (c) => err.push(c))
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig))

const [code, signal] = await new Promise((resolve) => {
  child.once('error', (error) => {
    err.push(Buffer.from(`run-unblocked: ${command}: ${error.message}\n`))
    resolve([127, null])
  })
  // 'close': the command has exited and both of its pipes are read to the end.
  child.once('close', (c, s) => resolve([c, s]))
})
await Promise.all([out.drained(), err.drained()])
process.exit(code ?? 128 + (constants.signals[signal] ?? 0))
