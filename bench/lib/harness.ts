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
}

export interface Measured {
  readonly name: string;
  /** median latency of one operation, ms */
  readonly median: number;
  readonly samples: number;
  /** median absolute deviation relative to the median, % */
  readonly madPercent: number;
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
  return { name, median: m, samples: sorted.length, madPercent: m > 0 ? (mad / m) * 100 : 0 };
}

/** Runs synchronous tasks; returns one summary per task, by name. */
export function measureSync(tasks: readonly TaskSpec[], options: MeasureOptions): Map<string, Measured> {
  const pooled = new Map<string, number[]>(tasks.map((t) => [t.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.timeMs / options.rounds,
      iterations: Math.max(1, Math.ceil(options.minSamples / options.rounds)),
      warmup: round === 0,
      warmupTime: options.warmupMs ?? 100,
      warmupIterations: options.warmupIterations ?? 3,
      throws: true,
      setup: () => collectGarbage(),
    });
    // rotate the order each round so no contender always runs first (cold caches) or last
    const order = tasks.map((_, i) => tasks[(i + round) % tasks.length] as TaskSpec);
    for (const task of order) {
      const fn = task.fn;
      bench.add(task.name, () => { blackhole(fn()); }, task.beforeEach ? { beforeEach: task.beforeEach } : {});
    }
    for (const done of bench.runSync()) {
      const samples = done.result?.latency.samples ?? [];
      pooled.get(done.name)?.push(...samples);
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
      pooled.get(done.name)?.push(...(done.result?.latency.samples ?? []));
    }
  }
  return new Map(tasks.map((t) => [t.name, summarize(t.name, pooled.get(t.name) ?? [])]));
}

/** `ms` as a short human figure: 3.21 µs, 45.6 µs, 1.23 ms, 456 ms. */
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
