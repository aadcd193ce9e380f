/**
 * Progress bars on stderr (cli-progress): drawn only when stderr is a terminal and `--json` is off, so
 * piped output and scripts see no control characters.
 */
import cliProgress from 'cli-progress'

export type Bars = {
  /** Sets the bar `key` (created on first use) to `value` of `total`. */
  update(key: string, label: string, value: number, total: number): void
  stop(): void
}

const format = (value: number) => {
  if (value >= 1024 ** 3) return `${(value / 1024 ** 3).toFixed(1)} GB`
  if (value >= 1024 ** 2) return `${(value / 1024 ** 2).toFixed(1)} MB`
  if (value >= 1024) return `${(value / 1024).toFixed(0)} KB`
  return `${value} B`
}

export function createBars(enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Bars {
  if (!enabled || !stream.isTTY) return { update: () => {}, stop: () => {} }
  const multi = new cliProgress.MultiBar(
    {
      stream,
      hideCursor: true,
      clearOnComplete: false,
      format: '{label} [{bar}] {percentage}% | {done}/{size}',
      barCompleteChar: '█',
      barIncompleteChar: '░',
    },
    cliProgress.Presets.shades_classic,
  )
  const bars = new Map<string, cliProgress.SingleBar>()
  return {
    update(key, label, value, total) {
      let bar = bars.get(key)
      const payload = { label: label.padEnd(24).slice(0, 24), done: format(value), size: format(total) }
      if (!bar) {
        bar = multi.create(Math.max(total, 1), value, payload)
        bars.set(key, bar)
      }
      bar.setTotal(Math.max(total, 1))
      bar.update(value, payload)
    },
    stop: () => multi.stop(),
  }
}
