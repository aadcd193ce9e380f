import { defineConfig } from 'vitest/config'
import { SlowFirstSequencer } from './tests/support/slowFirstSequencer.js'

const exclude = ['node_modules/**', 'dist/**', 'generated/**', 'data/**', '.tmp/**']

export default defineConfig({
  test: {
    // include/exclude are per project: `extends: true` concatenates arrays, it does not replace them.
    // Forks keep native addons (better-sqlite3, llama.cpp) out of vitest's main process. Vitest's default is
    // cores - 1 workers, i.e. one on these two-core machines; the suite spends most of its time waiting on
    // servers, child processes and chains (a whole run used 0.76 of the 2 cores with two forks), so three forks
    // (VITEST_MAX_FORKS overrides). Each file gets a fresh fork. Without isolation (VITEST_ISOLATE=0, for local
    // runs) each fork imports the gateway, viem and the OpenAPI tooling once instead of once per file — collect
    // 383 → 48 s, a whole run in 9 min 39 s — but three of four such runs here lost a fork mid-file (tinypool's
    // "Terminating worker thread", its files unreported, no summary), cause not found (docs/testing.md, "Speed").
    // The live suites start first so that the run does not end on one of them.
    pool: 'forks',
    poolOptions: { forks: { maxForks: Number(process.env.VITEST_MAX_FORKS ?? 3), minForks: 1, isolate: process.env.VITEST_ISOLATE !== '0' } },
    sequence: { sequencer: SlowFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['**/*.test.ts'], exclude: [...exclude, 'tests/browser/**', 'tests/system/**'], sequence: { groupOrder: 0 } } },
      {
        // The files that run against the whole system as `npm start` runs it: the browser files (each runs a
        // Chromium) and tests/system/ (stock clients, MCP and x402 clients against the started servers). They share
        // one system (devnet, model server, gateway; started by the globalSetup): one file at a time, in a pool of
        // their own (threads) so that they run beside the unit files instead of after them — vitest runs the pools
        // of one group at once; in the forks pool a single-fork project waits for every other file (~110 s at the
        // end of a run with two cores half idle). The name stays `browser` (`npm run test:browser`).
        extends: true,
        test: {
          name: 'browser',
          include: ['tests/browser/**/*.test.ts', 'tests/system/**/*.test.ts'],
          exclude,
          globalSetup: ['tests/browser/support/sharedSystem.ts'],
          pool: 'threads',
          poolOptions: { threads: { singleThread: true, isolate: true } },
          testTimeout: 120_000,
          hookTimeout: 240_000,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
})
