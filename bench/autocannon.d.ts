// autocannon ships no types; this is the part of its programmatic API the bench uses.
declare module 'autocannon' {
  export interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly stddev: number;
    readonly min: number;
    readonly max: number;
    readonly total: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
  }
  export interface Result {
    readonly requests: Histogram & { readonly sent: number };
    readonly latency: Histogram;
    readonly throughput: Histogram;
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly mismatches: number;
    readonly non2xx: number;
    readonly connections: number;
  }
  export interface Options {
    readonly url: string;
    readonly connections?: number;
    readonly duration?: number;
    readonly amount?: number;
    readonly pipelining?: number;
    readonly method?: string;
    readonly body?: string | Buffer;
    readonly headers?: Record<string, string>;
    readonly expectBody?: string;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
