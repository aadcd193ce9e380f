/**
 * Known failures: model-server defects the fuzzer finds that are owned by another change and not fixed yet. A
 * violation matching an entry is reported apart instead of failing the run; conformance.test.ts sends each
 * entry's `reproduce` request and proves it still fails — so when the fix lands that test fails and the entry is
 * deleted. Gateway defects never go here: they are fixed. The list is empty today.
 */
import type { Violation } from './FuzzRun.js'

export type KnownFailure = {
  server: 'modelserver'
  /** operationId(s) affected. */
  operation: RegExp
  /** The violation's problem text. */
  problem: RegExp
  why: string
  /** A request that shows it (checked by fuzz.test.ts). */
  reproduce: { method: string; path: string; body?: unknown }
}

/** Empty: every finding so far is fixed (conformance/README.md). A new entry needs a `reproduce` request. */
export const KNOWN_FAILURES: readonly KnownFailure[] = []

export function matchKnownFailure(list: readonly KnownFailure[], v: Pick<Violation, 'server' | 'operation' | 'problem'>): KnownFailure | undefined {
  return list.find((k) => k.server === v.server && k.operation.test(v.operation) && k.problem.test(v.problem))
}
