/**
 * Progress bars on stderr (cli-progress): drawn only when stderr is a terminal and `--json` is off, so
 * piped output and scripts see no control characters.
 *
 * In a terminal, every line fits its width, read at each redraw (`stream.columns`, so a resized window is
 * followed): the bar shrinks first, then the label; a line never reaches the last column, where a terminal
 * would wrap it or cli-progress would cut it. Text is never written while bars are live, since it would land
 * inside the bar being redrawn: `print` puts it on its own line above the bars, and `done` settles the bars
 * drawn so far (final state, then a new line) so a step's message can follow them.
 *
 * Live bars hold a redraw timer, which keeps the process alive: bars that outlived their command would hang
 * the CLI after it printed its result or its error. So bars never outlive their command: `close` is final
 * (a late progress report, e.g. from a file still being read after its upload failed, draws nothing), and
 * `closeAllBars` — which `main` calls when any command ends, however it ends — closes every set still open.
 * While bars are drawn, Ctrl-C (SIGINT) or SIGTERM first closes them, giving the cursor back, then ends the
 * process as the signal would have.
 */
import cliProgress from 'cli-progress'

export type Bars = {
  /** Sets the bar `key` (created on first use) to `value` of `total`. */
  update(key: string, label: string, value: number, total: number): void
  /**
   * A message line: above the live bars when there are some, else straight to the terminal. Returns false
   * when bars are off (not a terminal, or `--json`): the caller prints it as it would without bars.
   */
  print(text: string): boolean
  /** Draws the bars' final state and leaves them; the next `update` starts new bars below. */
  done(): void
  /** As `done`, and final: later `update`s draw nothing and `print` returns false. Safe to call more than once. */
  close(): void
}

const formatBytes = (value: number) => {
  if (value >= 1024 ** 3) return `${(value / 1024 ** 3).toFixed(1)} GB`
  if (value >= 1024 ** 2) return `${(value / 1024 ** 2).toFixed(1)} MB`
  if (value >= 1024) return `${(value / 1024).toFixed(0)} KB`
  return `${value} B`
}

const LABEL_MAX = 24
const BAR_MAX = 40
const BAR_MIN = 10
const LABEL_MIN = 8

type Payload = { label: string; done: string; size: string }

/**
 * One bar line in at most `width - 1` columns: `label [████░░░░] 87% 130 KB/150 KB`. The amounts are kept
 * whole; the bar, then the label, give way; below the minimum bar the line has no bar.
 */
export function formatBarLine(width: number, progress: number, payload: Payload): string {
  const room = Math.max(1, width - 1)
  const ratio = Math.min(1, Math.max(0, progress))
  const tail = `${`${Math.floor(ratio * 100)}%`.padStart(4)} ${payload.done}/${payload.size}`
  let label = payload.label.slice(0, LABEL_MAX)
  // "label [bar] tail": four separators
  let barWidth = Math.min(BAR_MAX, room - label.length - tail.length - 4)
  if (barWidth < BAR_MIN) {
    const labelRoom = room - BAR_MIN - tail.length - 4
    if (labelRoom >= LABEL_MIN) {
      label = label.slice(0, labelRoom)
      barWidth = BAR_MIN
    } else {
      // too narrow for a bar: the label, cut, then the amounts
      label = label.slice(0, Math.max(0, room - tail.length - 1))
      return (label ? `${label} ${tail}` : tail).slice(0, room)
    }
  }
  const filled = Math.round(ratio * barWidth)
  return `${label} [${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}] ${tail}`
}

/** Every set of bars not yet closed: what `closeAllBars` closes when a command ends. */
const open = new Set<Bars>()
const SIGNALS = ['SIGINT', 'SIGTERM'] as const

/** While bars are drawn, a signal closes them (the cursor comes back), then ends the process as it would have. */
function onSignal(signal: NodeJS.Signals): void {
  closeAllBars()
  process.kill(process.pid, signal)
}
/** How many sets are drawing now: the signal handlers are in place while any is. */
let drawing = 0
function drawingChanged(by: 1 | -1): void {
  drawing += by
  for (const signal of SIGNALS) {
    if (by === 1 && drawing === 1) process.once(signal, onSignal)
    if (by === -1 && drawing === 0) process.off(signal, onSignal)
  }
}

/** Closes every set of bars still open (the end of a command, whatever its outcome). */
export function closeAllBars(): void {
  for (const bars of [...open]) bars.close()
}

export function createBars(enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Bars {
  if (!enabled || !stream.isTTY) return { update: () => {}, print: () => false, done: () => {}, close: () => {} }
  let multi: cliProgress.MultiBar | undefined
  let closed = false
  let bars = new Map<string, cliProgress.SingleBar>()
  // Labels of one set share a width so the bars line up.
  let labelWidth = 0
  const settle = () => {
    if (!multi) return
    multi.update() // flushes lines queued by `print`, then redraws
    multi.stop()
    multi = undefined
    bars = new Map()
    labelWidth = 0
    drawingChanged(-1)
  }
  const self: Bars = {
    update(key, label, value, total) {
      if (closed) return
      if (!multi) {
        multi = new cliProgress.MultiBar({
          stream,
          hideCursor: true,
          clearOnComplete: false,
          format: (_options, params, payload: Payload) => formatBarLine(params.maxWidth, params.progress, { ...payload, label: payload.label.padEnd(labelWidth) }),
        })
        drawingChanged(1)
      }
      labelWidth = Math.max(labelWidth, Math.min(LABEL_MAX, label.length))
      let bar = bars.get(key)
      const payload: Payload = { label, done: formatBytes(value), size: formatBytes(total) }
      if (!bar) {
        bar = multi.create(Math.max(total, 1), value, payload)
        bars.set(key, bar)
      }
      bar.setTotal(Math.max(total, 1))
      bar.update(value, payload)
    },
    print(text) {
      if (closed) return false
      if (multi) multi.log(`${text}\n`)
      else stream.write(`${text}\n`)
      return true
    },
    done: settle,
    close() {
      settle()
      closed = true
      open.delete(self)
    },
  }
  open.add(self)
  return self
}
