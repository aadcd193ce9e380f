/**
 * Vitest sequencer: the live suites first, then vitest's own order (failed first, then longest by the last run's
 * cached durations, then largest file). With two forks on two cores the run ends when its longest file ends, so a
 * multi-minute suite started last would leave one core idle for minutes; a clean clone (CI) has no cached
 * durations, which is why the known long ones are named here (measured per file, docs/testing.md "Speed").
 */
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** In this order, each ahead of every file it does not match. */
export const SLOW_FIRST: readonly RegExp[] = [
  /^conformance\/conformance\.test\.ts$/, // npm start system + every machine + 90 s fuzz + prototype probe + mocks
  /^tests\/batch\/paidUploads\.e2e\.test\.ts$/,
  /^tests\/cli\/cli\.integration\.test\.ts$/,
  /^tests\/reliability\/soak\.test\.ts$/, // 60 s of load plus two PostgreSQL gateways and HAProxy
  /\.e2e\.test\.ts$/,
  /\.integration\.test\.ts$/,
]

export function slowRank(file: string): number {
  const i = SLOW_FIRST.findIndex((p) => p.test(file))
  return i === -1 ? SLOW_FIRST.length : i
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    return sorted
      .map((spec, index) => ({ spec, index, rank: slowRank(relative(root, spec.moduleId).split('\\').join('/')) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map(({ spec }) => spec)
  }
}
