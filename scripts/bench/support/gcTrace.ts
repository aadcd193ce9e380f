/**
 * Reads V8's `--trace-gc-nvp` lines (one name=value line per collection) so a benchmark can count collections
 * and their pauses over a measured interval, and see how many bytes the program allocated and how many
 * survived into the old generation (promoted). Counted per request, these figures do not depend on how busy the
 * machine is, unlike latency.
 *
 * A line looks like (Node 20, V8 11.3; fields abridged):
 *   [1234:0x5e0]   2210 ms: pause=1.4 mutator=11.2 gc=s reduce_memory=0 … allocated=1310720 promoted=20480 …
 * Node 26 (V8 14) prints the same fields as JSON after `GC: `:
 *   [1234:0x5e0:0]   2210 ms: GC: {"pause":1.4,"mutator":11.2,"gc":"s",…,"allocated":1310720,"promoted":20480,…}
 * `gc=s` is a scavenge (young generation), `gc=mc` a mark-compact (whole heap). A mark-compact's line also
 * gives the time its incremental marking steps took on the main thread before the final pause (`incremental=`,
 * `incremental_longest_step=`): those steps stall requests too.
 */

export type GcEvent = {
  kind: 'scavenge' | 'mark-compact' | 'other'
  /** The atomic pause. */
  pauseMs: number
  /** Main-thread time of the incremental marking steps that led up to a mark-compact, and the longest of them. */
  incrementalMs: number
  incrementalLongestStepMs: number
  /**
   * Bytes allocated since the previous collection; bytes moved into the old generation by this scavenge (a
   * mark-compact's line repeats what the scavenges since the previous one promoted, so it is not counted).
   */
  allocatedBytes: number
  promotedBytes: number
}

/** One collection from a `--trace-gc-nvp` line, or undefined for any other line (log output, other tracing). */
export function parseGcNvpLine(line: string): GcEvent | undefined {
  const fields = gcFields(line)
  if (!fields) return undefined
  const gc = fields.get('gc')
  const pause = Number(fields.get('pause'))
  if (gc === undefined || !Number.isFinite(pause)) return undefined
  const number = (name: string) => Number(fields.get(name) ?? 0) || 0
  return {
    kind: gc === 's' ? 'scavenge' : gc === 'mc' ? 'mark-compact' : 'other',
    pauseMs: pause,
    incrementalMs: number('incremental'),
    incrementalLongestStepMs: number('incremental_longest_step'),
    allocatedBytes: number('allocated'),
    promotedBytes: number('promoted'),
  }
}

/** The name=value pairs of a collection's line, in either form; undefined for any other line. */
function gcFields(line: string): Map<string, string> | undefined {
  const json = line.indexOf(' GC: {')
  if (json >= 0) {
    try {
      const record = JSON.parse(line.slice(json + 5)) as Record<string, unknown>
      return new Map(Object.entries(record).map(([name, value]) => [name, String(value)]))
    } catch {
      return undefined
    }
  }
  if (!line.includes(' gc=') || !line.includes('pause=')) return undefined
  return new Map([...line.matchAll(/(?:^|\s)([\w.]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]))
}

export type GcSummary = {
  scavenges: number
  markCompacts: number
  /** Sum and largest of all pauses (every kind), ms. */
  pauseTotalMs: number
  pauseMaxMs: number
  /** Incremental marking on the main thread: total, and the longest single step. */
  incrementalMs: number
  incrementalStepMaxMs: number
  allocatedBytes: number
  promotedBytes: number
}

export function summariseGc(events: readonly GcEvent[]): GcSummary {
  const s: GcSummary = { scavenges: 0, markCompacts: 0, pauseTotalMs: 0, pauseMaxMs: 0, incrementalMs: 0, incrementalStepMaxMs: 0, allocatedBytes: 0, promotedBytes: 0 }
  for (const e of events) {
    if (e.kind === 'scavenge') s.scavenges++
    else if (e.kind === 'mark-compact') s.markCompacts++
    s.pauseTotalMs += e.pauseMs
    s.pauseMaxMs = Math.max(s.pauseMaxMs, e.pauseMs)
    s.incrementalMs += e.incrementalMs
    s.incrementalStepMaxMs = Math.max(s.incrementalStepMaxMs, e.incrementalLongestStepMs)
    s.allocatedBytes += e.allocatedBytes
    if (e.kind === 'scavenge') s.promotedBytes += e.promotedBytes
  }
  return s
}
