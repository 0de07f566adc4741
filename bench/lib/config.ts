/** Run settings shared by every section: `--quick` shrinks sizes and time budgets. */
export interface RunConfig {
  readonly quick: boolean;
  /** row counts of the generated enrolments for the evaluate runs */
  readonly sizes: readonly number[];
  /** rows behind the server and client benchmarks */
  readonly serverRows: number;
  /** records streamed by the searchAll memory run */
  readonly searchAllRows: number;
  readonly searchAllPageSize: number;
  /** autocannon seconds per round, and rounds per contender */
  readonly loadSeconds: number;
  readonly loadRounds: number;
  readonly connections: number;
}

export function makeConfig(quick: boolean): RunConfig {
  return quick
    ? { quick, sizes: [10_000], serverRows: 200_000, searchAllRows: 100_000, searchAllPageSize: 1000, loadSeconds: 2, loadRounds: 1, connections: 10 }
    : { quick, sizes: [10_000, 200_000, 1_000_000], serverRows: 200_000, searchAllRows: 1_000_000, searchAllPageSize: 1000, loadSeconds: 3, loadRounds: 4, connections: 10 };
}

/** Time budget for one contender on `rows` records. Slow peers at 1M rows get few samples. */
export function evalBudget(config: RunConfig, rows: number): { timeMs: number; minSamples: number; rounds: number; warmupMs: number; warmupIterations: number } {
  if (config.quick) return { timeMs: rows > 20_000 ? 0 : 40, minSamples: rows > 20_000 ? 1 : 2, rounds: 1, warmupMs: 0, warmupIterations: 0 };
  // tinybench runs each task until both its time and its sample count are reached: fast
  // contenders collect many samples in the time, slow peers stop at the minimum
  if (rows <= 20_000) return { timeMs: 200, minSamples: 6, rounds: 2, warmupMs: 50, warmupIterations: 2 };
  if (rows <= 300_000) return { timeMs: 300, minSamples: 4, rounds: 2, warmupMs: 0, warmupIterations: 0 };
  // at 1M rows a slow peer takes seconds per pass: the checked run before timing is its warm-up
  // one round: a full GC before each task costs ~0.5 s on a heap holding a million rows
  return { timeMs: 300, minSamples: 2, rounds: 1, warmupMs: 0, warmupIterations: 0 };
}
