import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'generated/**', 'data/**', '.tmp/**'],
    // Two cores: forks keep native addons (better-sqlite3, llama.cpp) isolated per file.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
