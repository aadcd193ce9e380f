/**
 * The memory soak's verdict ("10 minutes of the mixed benchmark load leaves RSS within ±15% of its
 * value after the first minute"), read strictly: every minute's sample, not only the last, must lie inside
 * the band around minute 1.
 */
export type SoakMinute = { minute: number; value: number; /** (value − minute 1) / minute 1 */ deviation: number; inside: boolean }
export type SoakVerdict = { minutes: SoakMinute[]; allInside: boolean; lastInside: boolean; worst: SoakMinute }

/** `samples[i]`: the value after minute i + 1; `band`: 0.15 for ±15%. */
export function soakBand(samples: readonly number[], band = 0.15): SoakVerdict {
  if (samples.length === 0) throw new Error('soakBand: no samples')
  const first = samples[0]!
  const minutes = samples.map((value, i) => {
    const deviation = (value - first) / first
    // Rounded to 0.01% before comparing, so a sample printed as "+15.00%" is not judged outside.
    return { minute: i + 1, value, deviation, inside: Math.abs(Math.round(deviation * 1e4)) <= Math.round(band * 1e4) }
  })
  const worst = minutes.reduce((w, m) => (Math.abs(m.deviation) > Math.abs(w.deviation) ? m : w))
  return { minutes, allInside: minutes.every((m) => m.inside), lastInside: minutes.at(-1)!.inside, worst }
}
