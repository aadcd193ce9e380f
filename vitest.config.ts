import { defineConfig } from 'vitest/config'

const exclude = ['node_modules/**', 'dist/**', 'generated/**', 'data/**', '.tmp/**']

export default defineConfig({
  test: {
    // include/exclude are per project: `extends: true` concatenates arrays, it does not replace them.
    // Two cores: forks keep native addons (better-sqlite3, llama.cpp) isolated per file.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['**/*.test.ts'], exclude: [...exclude, 'tests/browser/**'], sequence: { groupOrder: 0 } } },
      {
        // Each browser file runs a whole system (devnet, model server, gateway) plus Chromium: one file at a
        // time, after every other file, or two of them starve each other on two cores.
        extends: true,
        test: {
          name: 'browser',
          include: ['tests/browser/**/*.test.ts'],
          exclude,
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 120_000,
          hookTimeout: 240_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
