import { defineConfig } from 'vitest/config';

// Under CI the JSON report feeds the plain `N passed, N failed` line that .ci/run prints last.
const ci = process.env.CI === 'true' || process.env.CI === '1';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Builds dist/ once for the few tests that run the real bin.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on CI: keep workers few so property budgets and HTTP tests stay stable.
    pool: 'forks',
    maxWorkers: 2,
    // Test files share each worker's module cache: re-importing the project (Chevrotain's grammar,
    // undici, ink) for each of ~80 files was a third of the suite's time (66 s → 42 s here). Tests
    // keep no state in modules they do not reset; every file passes alone and in any order.
    isolate: false,
    reporters: ci ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
  },
});
