import { Writable } from 'node:stream'
import { createLogger, type CreateLoggerParameters, type Logger } from '../../src/shared/logger.js'

export type CapturedLogger = {
  logger: Logger
  /** Every line written so far, parsed. */
  lines: Record<string, unknown>[]
  /** Every line written so far, as raw text (what would have reached stdout). */
  text: () => string
}

/** A logger that keeps every line in memory (tests assert on it and scan it for secrets). */
export function createCapturingLogger(parameters: Omit<CreateLoggerParameters, 'destination'> = {}): CapturedLogger {
  const raw: string[] = []
  const lines: Record<string, unknown>[] = []
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      const text = chunk.toString()
      for (const line of text.split('\n')) {
        if (!line) continue
        raw.push(line)
        try {
          lines.push(JSON.parse(line))
        } catch {
          lines.push({ msg: line })
        }
      }
      callback()
    },
  })
  const logger = createLogger({ level: 'trace', ...parameters, destination })
  return { logger, lines, text: () => raw.join('\n') }
}
