import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on CI: keep workers few so property budgets and HTTP tests stay stable.
    pool: 'forks',
    maxWorkers: 2,
  },
});
