/**
 * The load generator in its own process: runs autocannon with the options
 * given as JSON in argv[2] and prints the summary as one JSON line.
 */
import autocannon from 'autocannon';
import type { Options } from 'autocannon';

/** What this child prints: autocannon's figures of the run (latencies in ms). */
export interface LoadSummary {
  readonly requests: number;
  readonly duration: number;
  readonly rps: number;
  readonly p50: number;
  readonly mean: number;
  readonly p99: number;
  readonly bytesPerSecond: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
}

const options = JSON.parse(process.argv[2] as string) as Options & { warmupSeconds?: number };
const { warmupSeconds, ...run } = options;
if (warmupSeconds) await autocannon({ ...run, duration: warmupSeconds });
const result = await autocannon(run);
process.stdout.write(JSON.stringify({
  requests: result.requests.total,
  duration: result.duration,
  rps: result.requests.total / result.duration,
  p50: result.latency.p50,
  mean: result.latency.average,
  p99: result.latency.p99,
  bytesPerSecond: result.throughput.average,
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: result.non2xx,
  mismatches: result.mismatches,
} satisfies LoadSummary) + '\n');
