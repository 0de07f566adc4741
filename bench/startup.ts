/**
 * Section 7: start-up, as a person meets it. Each figure is the median over
 * separate processes (a warm file cache, nothing else shared):
 *
 * - `node -e 0`, the floor;
 * - `ckql query 'from schools limit 1'` on the demo data, through the bin
 *   that ships (`dist/bin/ckql.js`, built here as `npm run build` does), wall
 *   time and peak RSS;
 * - `ckql` to its prompt in a terminal (a pty from `script(1)`), from spawn
 *   until `ckql> ` is printed;
 * - importing the library root (`ckql`) and the compiler alone, with no
 *   call: what an embedder pays before the first query.
 *
 * Peak RSS is read in the child (`process.resourceUsage().maxRSS` at exit,
 * through a one-line `--import` hook that every contender gets).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunConfig } from './lib/config.js';
import { cacheDir, rootDir } from './lib/data.js';
import { formatRatio } from './lib/harness.js';
import type { SectionResult } from './lib/report.js';

interface Sample {
  readonly ms: number;
  /** KiB, when the child reported it */
  readonly rssKiB: number | undefined;
}

const bin = path.join(rootDir, 'dist', 'bin', 'ckql.js');
const demoData = path.join(rootDir, 'examples', 'data');

/** `npm run build`: tsc, then the bin bundle, into the repository's dist/ (what the package ships). */
export function buildBin(log: (line: string) => void): void {
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, [path.join(rootDir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: rootDir, stdio: 'pipe' });
  } catch (error) {
    if (!existsSync(path.join(rootDir, 'dist', 'cli', 'main.js'))) throw error;
  }
  execFileSync(process.execPath, ['--import', 'tsx', path.join(rootDir, 'scripts', 'bundle-bin.ts')], { cwd: rootDir, stdio: 'pipe' });
  log(`startup: built dist/ and the bin bundle in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** A module every child imports first: it writes its peak RSS to the file named by CKQL_BENCH_RSS when it exits. */
function rssHook(): string {
  mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, 'rss-hook.mjs');
  writeFileSync(
    file,
    "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => { if (process.env.CKQL_BENCH_RSS) writeFileSync(process.env.CKQL_BENCH_RSS, String(process.resourceUsage().maxRSS)); });\n",
  );
  return file;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Runs `args` under node to the end (or until `until` shows on stdout); wall time from spawn. */
function runOnce(args: readonly string[], hook: string, options: { until?: string; command?: string } = {}): Promise<Sample> {
  const rssFile = path.join(cacheDir, `rss-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const env: NodeJS.ProcessEnv = { ...process.env, CKQL_BENCH_RSS: rssFile, HOME: cacheDir, NO_COLOR: '1' };
  delete env.CKQL_CONFIG;
  const nodeArgs = ['--import', hook, ...args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child =
      options.command === undefined
        ? spawn(process.execPath, nodeArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn('script', ['-qec', `${process.execPath} ${nodeArgs.map((a) => `'${a}'`).join(' ')}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let at: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (options.until !== undefined && at === undefined && out.includes(options.until)) {
        at = performance.now() - started;
        child.stdin?.write('.exit\r');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = at ?? performance.now() - started;
      if (options.until !== undefined && at === undefined) return reject(new Error(`startup: never saw ${JSON.stringify(options.until)}: ${out.slice(0, 300)}`));
      if (options.until === undefined && code !== 0) return reject(new Error(`startup: ${args.join(' ')} exited ${String(code)}: ${out.slice(0, 300)}`));
      let rssKiB: number | undefined;
      try {
        rssKiB = Number(readFileSync(rssFile, 'utf8'));
        rmSync(rssFile);
      } catch {
        rssKiB = undefined;
      }
      resolve({ ms, rssKiB });
    });
  });
}

async function measure(runs: number, run: () => Promise<Sample>): Promise<{ ms: number; rssMiB: number | undefined }> {
  await run(); // the file cache and the compile cache warm up once, as for a person's second command
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i += 1) samples.push(await run());
  const rss = samples.map((s) => s.rssKiB).filter((v): v is number => v !== undefined);
  return { ms: median(samples.map((s) => s.ms)), rssMiB: rss.length === 0 ? undefined : median(rss) / 1024 };
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;
const mib = (value: number | undefined): string => (value === undefined ? '—' : `${value.toFixed(0)} MiB`);

export async function benchStartup(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  buildBin(log);
  const hook = rssHook();
  const runs = config.quick ? 5 : 15;
  const importOf = (file: string): string[] => ['--input-type=module', '-e', `await import(${JSON.stringify(path.join(rootDir, 'dist', file))})`];
  log(`startup: ${runs} runs each`);
  const floor = await measure(runs, () => runOnce(['-e', '0'], hook));
  const query = await measure(runs, () => runOnce([bin, 'query', 'from schools limit 1', '--data', demoData], hook));
  const root = await measure(runs, () => runOnce(importOf('lib/index.js'), hook));
  const compiler = await measure(runs, () => runOnce(importOf('compile/compile.js'), hook));
  // PGlite on a tiny file: a fresh in-memory database from the cached cluster (the warm-up run makes the cache)
  const pglite = await measure(config.quick ? 3 : 5, () => runOnce([bin, 'query', 'from schools limit 1', '--data', path.join(demoData, 'schools.json'), '--engine', 'pglite'], hook));
  let repl: { ms: number; rssMiB: number | undefined } | undefined;
  try {
    repl = await measure(config.quick ? 3 : 7, () => runOnce([bin], hook, { until: 'ckql> ', command: 'script' }));
  } catch (error) {
    log(`startup: REPL to prompt not measured: ${error instanceof Error ? error.message : String(error)}`);
  }
  const ratio = query.ms / floor.ms;
  return {
    id: 'startup',
    title: '7. Startup',
    tables: [
      {
        title: `Start-up, medians of ${runs} processes after one warm-up (wall from spawn; peak RSS)`,
        headers: ['what', 'wall', 'peak RSS', '÷ node -e 0'],
        rows: [
          ['node -e 0 (the floor)', ms(floor.ms), mib(floor.rssMiB), '1.0×'],
          ["ckql query 'from schools limit 1' (demo data, dist/bin/ckql.js)", ms(query.ms), mib(query.rssMiB), formatRatio(ratio)],
          ['ckql to its prompt (a pty)', repl === undefined ? '—' : ms(repl.ms), repl === undefined ? '—' : mib(repl.rssMiB), repl === undefined ? '—' : formatRatio(repl.ms / floor.ms)],
          ["import the library root (`ckql`: dist/lib/index.js, the bundle)", ms(root.ms), mib(root.rssMiB), formatRatio(root.ms / floor.ms)],
          ['import the compiler alone (dist/compile/compile.js)', ms(compiler.ms), mib(compiler.rssMiB), formatRatio(compiler.ms / floor.ms)],
          ["ckql query 'from schools limit 1' --engine pglite (schools.json, 65 records; warm cluster cache)", ms(pglite.ms), mib(pglite.rssMiB), formatRatio(pglite.ms / floor.ms)],
        ],
      },
    ],
    targets: [
      { section: 'startup', what: 'ckql query on the demo data, wall', goal: '≤ 3× node -e 0', measured: `${formatRatio(ratio)} (${ms(query.ms)} vs ${ms(floor.ms)})`, met: ratio <= 3 },
      { section: 'startup', what: 'ckql query on the demo data, peak RSS', goal: '≤ 80 MiB', measured: mib(query.rssMiB), met: query.rssMiB === undefined ? null : query.rssMiB <= 80 },
      { section: 'startup', what: 'REPL to prompt', goal: '≤ 300 ms', measured: repl === undefined ? 'not measured (no script(1))' : ms(repl.ms), met: repl === undefined ? null : repl.ms <= 300 },
      { section: 'startup', what: 'import the library root / the compiler', goal: 'reported', measured: `${ms(root.ms)} / ${ms(compiler.ms)}`, met: null },
      { section: 'startup', what: 'PGlite: a tiny query to its answer, warm cluster cache, wall', goal: '≤ 1.5 s', measured: `${ms(pglite.ms)} (${formatRatio(pglite.ms / floor.ms)} node -e 0)`, met: pglite.ms <= 1500 },
      // the issue's 300 MB, in bytes: 286 MiB
      { section: 'startup', what: 'PGlite: a tiny query, peak RSS', goal: '≤ 300 MB (286 MiB)', measured: mib(pglite.rssMiB), met: pglite.rssMiB === undefined ? null : pglite.rssMiB * 1024 * 1024 <= 300e6 },
    ],
    notes: [
      'Command: `npm run bench -- --only startup`. The bin is the esbuild bundle of `dist/` (`scripts/bundle-bin.ts`): one file for the common path, chunks for the REPL and ink, config parsing, and the PostgreSQL engines. A one-shot command reads only the data files its query names.',
    ],
  };
}
