/**
 * A thin layer over tinybench 5: run a group of contenders in several
 * interleaved rounds (so a noisy minute on a shared 2-core machine hits all of
 * them, not just one), pool the samples, report the median.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Bench } from 'tinybench';

/**
 * A full GC before each contender's turn, so nobody pays for the garbage the
 * previous one left (V8 charges incremental marking to whoever allocates
 * next). `npm run bench` has no `--expose-gc`, so the flag is set here and
 * `gc` taken from a fresh context, where V8 installs it.
 */
function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
export const collectGarbage = exposeGc();

export interface TaskSpec {
  readonly name: string;
  /** one timed operation; its result goes to `blackhole` so V8 cannot drop the work */
  readonly fn: () => unknown;
  /** untimed preparation before each operation (a cold table, say) */
  readonly beforeEach?: () => void;
}

export interface MeasureOptions {
  /** total time budget per task over all rounds, ms */
  readonly timeMs: number;
  /** total minimum number of samples per task over all rounds */
  readonly minSamples: number;
  readonly rounds: number;
  readonly warmupMs?: number;
  readonly warmupIterations?: number;
  /**
   * What a sample's time is: `wall` (the default) or `cpu`, the CPU time of
   * the whole process (`process.cpuUsage()`, 1 µs steps; GC threads
   * included). A synchronous task's CPU time is its wall time less the time
   * the scheduler gave other processes: on a loaded machine a wall-clock
   * sample of 2 ms is stretched far more often than one of 0.2 ms, which
   * charges the slower contender for the load (see `cpuClock`).
   */
  readonly clock?: 'wall' | 'cpu';
}

/**
 * The process's CPU time, ms. Each read costs about 0.7 µs (a system call),
 * so samples timed with it are at least `MIN_CPU_SAMPLE_MS` long: the two
 * reads stay under 0.2 % of any sample.
 */
export function cpuClock(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export interface Measured {
  readonly name: string;
  /** median latency of one operation, ms */
  readonly median: number;
  readonly samples: number;
  /** median absolute deviation relative to the median, % */
  readonly madPercent: number;
  /** mean latency, ms: unlike the median it carries the rare long pauses (GC) a caller pays for in the end */
  readonly mean: number;
}

let sinkValue: unknown;
/** Keeps a result reachable; returns it for chaining. */
export function blackhole<T>(value: T): T {
  sinkValue = value;
  return value;
}
export function lastSink(): unknown {
  return sinkValue;
}

function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return Number.NaN;
  const mid = (sorted.length - 1) / 2;
  const lo = sorted[Math.floor(mid)] as number;
  const hi = sorted[Math.ceil(mid)] as number;
  return (lo + hi) / 2;
}

function summarize(name: string, samples: number[]): Measured {
  const sorted = [...samples].sort((a, b) => a - b);
  const m = median(sorted);
  const mad = median(sorted.map((s) => Math.abs(s - m)).sort((a, b) => a - b));
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { name, median: m, samples: sorted.length, madPercent: m > 0 ? (mad / m) * 100 : 0, mean };
}

/** A sample shorter than this is dominated by the timer: fast operations run in batches. */
const MIN_SAMPLE_MS = 0.05;
/** The same for the CPU clock, whose reads cost more than `performance.now()`'s. */
const MIN_CPU_SAMPLE_MS = 1;

/**
 * How many calls one sample makes: enough for `MIN_SAMPLE_MS`, estimated from
 * a few untimed calls. Tasks with `beforeEach` (a fresh input per call) are
 * never batched.
 */
function batchSize(task: TaskSpec, minSampleMs: number): number {
  if (task.beforeEach) return 1;
  let calls = 0;
  const t0 = performance.now();
  do {
    blackhole(task.fn());
    calls++;
  } while (performance.now() - t0 < minSampleMs * 4 && calls < 10_000);
  const each = (performance.now() - t0) / calls;
  return Math.max(1, Math.min(10_000, Math.ceil(minSampleMs / Math.max(each, 1e-6))));
}

function append(target: number[] | undefined, values: readonly number[], scale: number): void {
  // not push(...values): a fast task collects more samples than a call may have arguments
  if (target === undefined) return;
  for (const v of values) target.push(v / scale);
}

/** Runs synchronous tasks; returns one summary per task, by name (per-call times). */
export function measureSync(tasks: readonly TaskSpec[], options: MeasureOptions): Map<string, Measured> {
  const pooled = new Map<string, number[]>(tasks.map((t) => [t.name, []]));
  const cpu = options.clock === 'cpu';
  const batches = new Map(tasks.map((t) => [t.name, batchSize(t, cpu ? MIN_CPU_SAMPLE_MS : MIN_SAMPLE_MS)]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.timeMs / options.rounds,
      iterations: Math.max(1, Math.ceil(options.minSamples / options.rounds)),
      warmup: round === 0,
      warmupTime: options.warmupMs ?? 100,
      warmupIterations: options.warmupIterations ?? 3,
      throws: true,
      setup: () => collectGarbage(),
      ...(cpu ? { now: cpuClock } : {}),
    });
    // rotate the order each round so no contender always runs first (cold caches) or last
    const order = tasks.map((_, i) => tasks[(i + round) % tasks.length] as TaskSpec);
    for (const task of order) {
      const fn = task.fn;
      const batch = batches.get(task.name) ?? 1;
      const run = batch === 1
        ? () => { blackhole(fn()); }
        : () => { let last; for (let k = 0; k < batch; k++) last = fn(); blackhole(last); };
      bench.add(task.name, run, task.beforeEach ? { beforeEach: task.beforeEach } : {});
    }
    for (const done of bench.runSync()) {
      append(pooled.get(done.name), done.result?.latency.samples ?? [], batches.get(done.name) ?? 1);
    }
  }
  return new Map(tasks.map((t) => [t.name, summarize(t.name, pooled.get(t.name) ?? [])]));
}

export interface AsyncTaskSpec {
  readonly name: string;
  readonly fn: () => Promise<unknown>;
}

/** Same as `measureSync` for operations that return a promise (HTTP). */
export async function measureAsync(tasks: readonly AsyncTaskSpec[], options: MeasureOptions): Promise<Map<string, Measured>> {
  const pooled = new Map<string, number[]>(tasks.map((t) => [t.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.timeMs / options.rounds,
      iterations: Math.max(1, Math.ceil(options.minSamples / options.rounds)),
      warmup: true,
      warmupTime: options.warmupMs ?? 100,
      warmupIterations: options.warmupIterations ?? 10,
      throws: true,
      setup: () => collectGarbage(),
    });
    const order = tasks.map((_, i) => tasks[(i + round) % tasks.length] as AsyncTaskSpec);
    for (const task of order) {
      const fn = task.fn;
      bench.add(task.name, async () => { blackhole(await fn()); });
    }
    for (const done of await bench.run()) {
      append(pooled.get(done.name), done.result?.latency.samples ?? [], 1);
    }
  }
  return new Map(tasks.map((t) => [t.name, summarize(t.name, pooled.get(t.name) ?? [])]));
}

/** `ms` as a short human figure: 3.21 µs, 45.6 µs, 1.23 ms, 456 ms. */
/**
 * The median of `runs` timed calls after one warm-up, each after a
 * collection: for a section that times whole answers (a query, a tool call)
 * rather than a microbenchmark's batches.
 */
export async function medianTime(runs: number, run: () => unknown): Promise<number> {
  blackhole(await run());
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    collectGarbage();
    const t0 = performance.now();
    blackhole(await run());
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  const us = ms * 1000;
  if (us < 10) return `${us.toFixed(2)} µs`;
  if (us < 1000) return `${us.toFixed(1)} µs`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

export function formatRatio(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  if (x >= 100) return `${x.toFixed(0)}×`;
  if (x >= 10) return `${x.toFixed(1)}×`;
  return `${x.toFixed(2)}×`;
}

export function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs < 1024) return `${bytes.toFixed(0)} B`;
  if (abs < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
