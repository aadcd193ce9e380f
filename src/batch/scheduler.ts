/**
 * Runs a job once a day at `HH:MM` UTC. Runs never overlap (a tick while one is running is skipped);
 * a failed run is logged and the next day's run goes ahead (a failed batch is resumed by the next run).
 */
export type BatchSchedulerOptions = {
  dailyAt: string
  run: () => Promise<unknown>
  onError?: (err: unknown) => void
  nowMs?: () => number
}

export type BatchScheduler = {
  /** Epoch ms of the next run. */
  nextRunAt(): number
  stop(): void
}

/** Milliseconds from `nowMs` to the next `HH:MM` UTC (a full day when it is exactly now). */
export function msUntilDailyAt(dailyAt: string, nowMs: number): number {
  const match = /^(\d{2}):(\d{2})$/.exec(dailyAt)
  if (!match) throw new Error(`dailyAt must be HH:MM (got "${dailyAt}")`)
  const now = new Date(nowMs)
  let next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), Number(match[1]), Number(match[2]))
  if (next <= nowMs) next += 86_400_000
  return next - nowMs
}

export function startBatchScheduler(opts: BatchSchedulerOptions): BatchScheduler {
  const nowMs = opts.nowMs ?? Date.now
  let timer: NodeJS.Timeout | undefined
  let nextAt = 0
  let running = false
  let stopped = false

  const arm = () => {
    if (stopped) return
    const delay = msUntilDailyAt(opts.dailyAt, nowMs())
    nextAt = nowMs() + delay
    timer = setTimeout(tick, delay)
    timer.unref?.()
  }
  const tick = () => {
    if (!running) {
      running = true
      opts
        .run()
        .catch((err: unknown) => opts.onError?.(err))
        .finally(() => {
          running = false
        })
    }
    arm()
  }
  arm()
  return {
    nextRunAt: () => nextAt,
    stop() {
      stopped = true
      if (timer) clearTimeout(timer)
    },
  }
}
