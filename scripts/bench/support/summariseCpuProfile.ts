/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function and per package/area, so a
 * profile can be read without DevTools. `npx tsx scripts/bench/support/summariseCpuProfile.ts <file> [top]`.
 */
import { readFileSync } from 'node:fs'

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number }

/** Where a frame's code lives: an npm package, our source area, node internals, or V8 (GC, idle, program). */
export function areaOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'anonymous'})`
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]!
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0]
  const own = /\/(src|dist\/src)\/(.+)$/.exec(url)
  if (own) return 'src/' + own[2]!.split('/').slice(0, -1).join('/')
  return url
}

/**
 * `fromUs`: drop samples taken before this monotonic time in µs (V8 stamps samples with CLOCK_MONOTONIC, the
 * clock of `process.hrtime` in any process on the machine), so start-up and warm-up stay out of the summary.
 */
export function summarise(profile: Profile, top = 25, fromUs = 0): { areas: [string, number][]; functions: [string, number][]; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0
    if (at < fromUs) continue
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const areas = new Map<string, number>()
  const functions = new Map<string, number>()
  let total = 0
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame
    total += us
    const area = areaOf(frame.url, frame.functionName)
    areas.set(area, (areas.get(area) ?? 0) + us)
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)?src\//, 'src/')}:${frame.lineNumber + 1}`
    functions.set(fn, (functions.get(fn) ?? 0) + us)
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => [k, v / 1000] as [string, number])
  return { areas: sorted(areas), functions: sorted(functions), totalMs: total / 1000 }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2]
  if (!file) throw new Error('usage: summariseCpuProfile.ts <file.cpuprofile> [top]')
  const { areas, functions, totalMs } = summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(process.argv[3] ?? 25))
  const busy = totalMs - (areas.find(([a]) => a === '((idle))')?.[1] ?? 0)
  console.log(`total ${totalMs.toFixed(0)} ms, busy (not idle) ${busy.toFixed(0)} ms\n\nself time by area (% of busy):`)
  for (const [a, ms] of areas) if (a !== '((idle))') console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${a}`)
  console.log('\nself time by function (% of busy):')
  for (const [f, ms] of functions) if (!f.startsWith('(idle)')) console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${f}`)
}
