import { defineConfig } from 'vitest/config'
import { SlowFirstSequencer } from './tests/support/slowFirstSequencer.js'

const forks = Number(process.env.VITEST_MAX_FORKS ?? 3)
const exclude = ['node_modules/**', 'dist/**', 'generated/**', 'data/**', '.tmp/**']

export default defineConfig({
  test: {
    // include/exclude are per project: `extends: true` concatenates arrays, it does not replace them.
    // Forks keep native addons (better-sqlite3, llama.cpp) out of vitest's main process. Vitest's default is
    // cores - 1 workers, i.e. one on these two-core machines; the suite spends most of its time waiting on
    // servers, child processes and chains (with two forks a whole run left the two cores a quarter idle), so three
    // forks (VITEST_MAX_FORKS overrides).
    // No per-file isolation: a fork keeps its module cache from file to file, so the gateway, viem and the OpenAPI
    // tooling are imported three times a run instead of once per file (vitest's collect time falls about fivefold).
    // Every file already has its own database schema, ports, folders and wallets and none mocks
    // modules or writes process.env. VITEST_ISOLATE=1 gives each file a fresh fork again.
    // minForks = maxForks: a fork is never retired mid-run. With fewer, tinypool retires a fork that falls idle once
    // the queue is empty (the last files of a run), and nothing awaits that retirement: the likeliest source of the
    // unhandled "Terminating worker thread" that ends a non-isolated run early (minForks 1), the other forks' last
    // files unreported (docs/testing.md, "Speed").
    // The live suites start first so that the run does not end on one of them.
    pool: 'forks',
    poolOptions: { forks: { maxForks: forks, minForks: forks, isolate: process.env.VITEST_ISOLATE === '1' } },
    sequence: { sequencer: SlowFirstSequencer },
    // Event-loop stalls of every vitest process, printed at the end of the run (tests/support/stallWatch.ts).
    reporters: ['default', './tests/support/stallReporter.ts'],
    setupFiles: ['tests/support/stallWatchSetup.ts'],
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
