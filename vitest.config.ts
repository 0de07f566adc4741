import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Under CI the JSON report feeds the plain `N passed, N failed` line that .ci/run prints last.
const ci = process.env.CI === 'true' || process.env.CI === '1';

/**
 * The files that spend most of their time waiting on other processes (the
 * built bin, npm, tmux, Chromium, tsx) or that run longest, in the order
 * they start. A file's tests run one after another in one worker, so the
 * suite ends no sooner than its longest file: these start first, and their
 * waiting overlaps the other files' work. vitest's own order (by the last
 * run's durations, kept in node_modules/.vite) follows; a clean clone (CI)
 * has none.
 */
const startFirst = [
  'test/readme.test.ts',
  'test/e2e/playground.test.ts',
  'test/repl/tmux.test.ts',
  'test/cli/package.test.ts',
  'test/client/sql-target.test.ts',
  'test/cli/commands.test.ts',
  'test/cli/serve.test.ts',
  'test/cases/run.test.ts',
];

class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const at = startFirst.indexOf(relative(spec.project.config.root, spec.moduleId).replaceAll('\\', '/'));
      return at === -1 ? startFirst.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Builds dist/ once for the few tests that run the real bin.
    globalSetup: ['test/global-setup.ts'],
    // The code under test's in-memory PGlite databases come from the worker's pool (test/setup-pglite.ts).
    setupFiles: ['test/setup-pglite.ts'],
    testTimeout: 30_000,
    // expect.poll waits up to 5 s (default 1 s): a shared, loaded machine draws a page later, and a passing poll
    // returns as soon as it passes, so this costs nothing when all is well.
    expect: { poll: { timeout: 5_000 } },
    hookTimeout: 30_000,
    pool: 'forks',
    // The bin's wasm tiering budget (src/cli/wasm-tiering.ts) in the workers too: without it V8 recompiles PGlite's
    // PostgreSQL with TurboFan in every worker that opens a PGlite engine, CPU the tests never win back on 2 cores.
    // And one thread for V8's garbage collector: its helper threads only compete with the other worker for the two
    // cores (the whole suite: 111 → 108 s of CPU here).
    execArgv: ['--wasm-tiering-budget=1000000000', '--single-threaded-gc'],
    // Three workers on two cores: many files wait on other processes (the bin, Chromium, tmux, npm) or on
    // sockets, and a third worker fills those waits. It loads the project once more (≈ 1 s of CPU more in all);
    // the suite on an idle machine: 2 workers 66–68 s, 3 workers 63 s (2026-11-27).
    maxWorkers: 3,
    sequence: { sequencer: LongFirst },
    // Test files share each worker's module cache: re-importing the project (Chevrotain's grammar,
    // undici, ink) for each of ~80 files was a third of the suite's time (66 s → 42 s here). Tests
    // keep no state in modules they do not reset; every file passes alone and in any order.
    isolate: false,
    reporters: ci ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
  },
});
