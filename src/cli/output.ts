/** How a command prints: human lines, or one JSON document with `--json`. */
export type Output = {
  json: boolean
  /** A human line (suppressed with `--json`). */
  line(text: string): void
  /** The command's result: JSON with `--json`, else `human(result)`. */
  result<T>(value: T, human: (value: T) => string): void
}

export function createOutput(json: boolean, out: NodeJS.WritableStream = process.stdout): Output {
  return {
    json,
    line: (text) => {
      if (!json) out.write(`${text}\n`)
    },
    result: (value, human) => {
      out.write(json ? `${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n` : `${human(value)}\n`)
    },
  }
}
