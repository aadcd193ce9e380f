import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { parseGcNvpLine, summariseGc } from './gcTrace.js'

describe('parseGcNvpLine', () => {
  it('reads a scavenge and a mark-compact line as V8 prints them', () => {
    const s = parseGcNvpLine('[10788:0x42e6e490]       24 ms: pause=0.9 mutator=0.7 gc=s reduce_memory=0 scavenge=0.87 allocated=680440 promoted=591016 new_space_survived=252928')
    expect(s).toEqual({ kind: 'scavenge', pauseMs: 0.9, incrementalMs: 0, incrementalLongestStepMs: 0, allocatedBytes: 680440, promotedBytes: 591016 })
    const mc = parseGcNvpLine('[1:0x1]  760 ms: pause=17.4 mutator=34.0 gc=mc reduce_memory=0 incremental=24.5 incremental.finalize=0.0 incremental_longest_step=6.5 allocated=9891680 promoted=12001992')
    expect(mc).toMatchObject({ kind: 'mark-compact', pauseMs: 17.4, incrementalMs: 24.5, incrementalLongestStepMs: 6.5, allocatedBytes: 9891680 })
  })

  it('reads the JSON form of Node 26 (V8 14)', () => {
    const s = parseGcNvpLine('[4576:0x20428000:0]       79 ms: GC: {"pause":1.291,"mutator":70.1,"gc":"s","reduce_memory":false,"allocated":5230312,"promoted":180680,"incremental":0}')
    expect(s).toEqual({ kind: 'scavenge', pauseMs: 1.291, incrementalMs: 0, incrementalLongestStepMs: 0, allocatedBytes: 5230312, promotedBytes: 180680 })
    const mc = parseGcNvpLine('[1:0x1:0]  879 ms: GC: {"pause":183.166,"gc":"mc","is_incremental":true,"incremental":24.5,"allocated":37884000,"promoted":19688840,"incremental_longest_step":0.18}')
    expect(mc).toMatchObject({ kind: 'mark-compact', pauseMs: 183.166, incrementalMs: 24.5, incrementalLongestStepMs: 0.18, allocatedBytes: 37884000 })
    expect(parseGcNvpLine('[1:0x1:0]  144 ms: Memory pool: Removed pages: 0, removed large pages: 0')).toBeUndefined()
  })

  it('ignores log lines and other output', () => {
    expect(parseGcNvpLine('{"level":30,"msg":"gateway listening","port":1234}')).toBeUndefined()
    expect(parseGcNvpLine('[1:0x1]  12 ms: Scavenge 3.8 (4.2) -> 3.5 (5.2) MB, 0.94 / 0.00 ms')).toBeUndefined()
  })

  it('understands what this Node prints under --trace-gc-nvp', () => {
    const run = spawnSync(process.execPath, ['--trace-gc-nvp', '--max-semi-space-size=1', '-e', 'let a=[];for(let i=0;i<2e6;i++){a.push({i});if(a.length>5e5)a=[]}'], {
      encoding: 'utf8',
    })
    const events = run.stdout.split('\n').map(parseGcNvpLine).filter((e) => e !== undefined)
    const summary = summariseGc(events)
    expect(summary.scavenges).toBeGreaterThan(0)
    expect(summary.allocatedBytes).toBeGreaterThan(2e6 * 16) // at least the objects themselves
    expect(summary.pauseMaxMs).toBeGreaterThan(0)
  })
})

describe('summariseGc', () => {
  it('counts by kind and adds pauses and bytes', () => {
    const e = (kind: 'scavenge' | 'mark-compact', pauseMs: number, step = 0) => ({ kind, pauseMs, incrementalMs: step * 2, incrementalLongestStepMs: step, allocatedBytes: 100, promotedBytes: 10 })
    expect(summariseGc([e('scavenge', 1), e('scavenge', 2.5), e('mark-compact', 4, 3)])).toEqual({
      scavenges: 2,
      markCompacts: 1,
      pauseTotalMs: 7.5,
      pauseMaxMs: 4,
      incrementalMs: 6,
      incrementalStepMaxMs: 3,
      allocatedBytes: 300,
      promotedBytes: 20, // scavenges only
    })
  })
})
