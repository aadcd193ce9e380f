import { pino, type Logger, type LoggerOptions } from 'pino'

export type { Logger } from 'pino'

export type CreateLoggerParameters = {
  /** Logger name (`name` field of every line). */
  name?: string
  /** pino level; default `info`, or `LOG_LEVEL` when set. */
  level?: string
  /** Where lines go; default stdout (see `stdoutDestination`). */
  destination?: NodeJS.WritableStream
}

/**
 * stdout, written synchronously. pino's default stdout stream writes asynchronously and, at process exit,
 * flushes what is in flight with sonic-boom's `flushSync`, which retries *every* write error forever —
 * EPIPE included. When our reader is gone (the parent died, the pipe closed) the last line before
 * `process.exit` then spins the main thread for ever, and SIGTERM never finishes. Synchronous writes are
 * never in flight at exit (no exit flush is registered for them), and the first EPIPE makes pino stop
 * writing (its broken-pipe filter turns the stream into a no-op): later lines are dropped, nothing blocks.
 */
export function stdoutDestination(): NodeJS.WritableStream {
  return pino.destination({ dest: 1, sync: true }) as unknown as NodeJS.WritableStream
}

/** Field paths never written by any logger (defence in depth: code should not log them in the first place). */
export const redactedPaths = [
  'req.headers["x-session-token"]',
  'req.headers.authorization',
  'req.headers["payment-signature"]',
  'req.headers["x-payment"]',
  '*.privateKey',
  '*.private_key',
  '*.session_token',
]

export function createLogger({ name, level, destination }: CreateLoggerParameters = {}): Logger {
  const options: LoggerOptions = {
    name,
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: redactedPaths, censor: '[redacted]' },
    base: undefined,
  }
  return pino(options, destination ?? stdoutDestination())
}
