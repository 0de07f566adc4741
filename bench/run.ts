/**
 * `npm run bench`: ckql beside the peers users would pick instead (liqe,
 * sift, mingo) and beside the floor for each job (JSON.parse, a hand-written
 * loop, a bare node:http server, a raw undici request), in one run.
 *
 *   npm run bench                         full run (< 5 min), writes BENCHMARKS.md
 *   npm run bench -- --quick              smoke run (< 1 min), prints only
 *   npm run bench -- --only evaluate      one section (parse|evaluate|server|memory|client|engines|startup|connections|load|replica|aggregates|underload|expressions|windows|unions|mcp), prints only
 *                                         (engines: postgres columns need CKQL_BENCH_PG_URL or CKQL_TEST_PG_URL)
 *   … --write                             also keep an --only run's sections in bench/results.json and
 *                                         write BENCHMARKS.md from it (the other sections stay as they were)
 *   npm run bench -- --render             rewrite BENCHMARKS.md from bench/results.json and the current bench/analysis.md
 *
 * bench/results.json holds each section's latest figures with the run they
 * came from (command, date, load): sections measured by different runs stay
 * side by side without one run's partial figures erasing the others.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchClient } from './client.js';
import { buildCkql } from './lib/ckql.js';
import { makeConfig } from './lib/config.js';
import type { RunConfig } from './lib/config.js';
import { benchDir, cacheDir, rootDir } from './lib/data.js';
import { metMark, renderMarkdown, renderText } from './lib/report.js';
import type { SectionResult } from './lib/report.js';
import { benchMemory } from './memory.js';
import { benchParse } from './parse.js';
import { benchEvaluate } from './evaluate.js';
import { benchServer } from './server.js';
import { benchEngines } from './engines.js';
import { benchStartup } from './startup.js';
import { benchConnections } from './connections.js';
import { benchLoad } from './load.js';
import { benchReplica } from './replica.js';
import { benchAggregates } from './aggregates.js';
import { benchUnderLoad } from './underload.js';
import { benchExpressions } from './expressions.js';
import { benchWindows } from './windows.js';
import { benchUnions } from './unions.js';
import { benchMcp } from './mcp.js';

type SectionId = 'parse' | 'evaluate' | 'server' | 'memory' | 'client' | 'engines' | 'startup' | 'connections' | 'load' | 'replica' | 'aggregates' | 'underload' | 'expressions' | 'windows' | 'unions' | 'mcp';

const SECTIONS: Record<SectionId, { title: string; run: (config: RunConfig, log: (line: string) => void) => Promise<SectionResult> }> = {
  parse: { title: '1. Parse + compile', run: benchParse },
  evaluate: { title: '2. Evaluate', run: benchEvaluate },
  server: { title: '3. Server', run: benchServer },
  memory: { title: '4. Memory', run: benchMemory },
  client: { title: '5. Client overhead', run: benchClient },
  engines: { title: '6. Engines', run: benchEngines },
  startup: { title: '7. Startup', run: benchStartup },
  connections: { title: '8. Connections', run: benchConnections },
  load: { title: '9. Loading data, exact numbers', run: benchLoad },
  replica: { title: '10. Scale path: ckql serve over a primary and a streaming replica', run: benchReplica },
  aggregates: { title: '11. Aggregates and joins', run: benchAggregates },
  underload: { title: '12. Under load: PGlite beside the memory engine', run: benchUnderLoad },
  expressions: { title: '13. Expressions on the memory engine', run: benchExpressions },
  windows: { title: '14. Windows on the memory engine', run: benchWindows },
  unions: { title: '15. Unions on the memory engine', run: benchUnions },
  mcp: { title: '16. ckql mcp over stdio', run: benchMcp },
};
const ORDER: readonly SectionId[] = ['parse', 'evaluate', 'server', 'memory', 'client', 'engines', 'startup', 'connections', 'load', 'replica', 'aggregates', 'underload', 'expressions', 'windows', 'unions', 'mcp'];

interface Flags {
  readonly quick: boolean;
  readonly only: readonly SectionId[];
  readonly write: boolean;
  readonly render: boolean;
}

function parseFlags(argv: readonly string[]): Flags {
  let quick = false;
  let write = false;
  let render = false;
  const only: SectionId[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--write') write = true;
    else if (arg === '--render') render = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg.includes('=') ? arg.slice('--only='.length) : argv[++i];
      for (const part of (value ?? '').split(',')) {
        if (!(part in SECTIONS)) usage(`--only takes ${ORDER.join('|')} (comma-separated), got "${part}"`);
        only.push(part as SectionId);
      }
    } else if (arg === '--help' || arg === '-h') usage();
    else usage(`unknown option "${arg}"`);
  }
  return { quick, only, write, render };
}

function usage(problem?: string): never {
  if (problem) console.error(`bench: ${problem}`);
  console.error('usage: npm run bench [-- --quick] [--only parse|evaluate|server|memory|client|engines|startup|connections|load|replica|aggregates|underload|expressions] [--write] | [-- --render]');
  process.exit(problem ? 2 : 0);
}

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(rootDir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

interface RunInfo {
  readonly started: Date;
  readonly seconds: number;
  readonly command: string;
  readonly load: string;
  readonly quick: boolean;
  readonly machine: readonly string[];
}

interface SavedRun extends Omit<RunInfo, 'started'> {
  readonly started: string;
  readonly results: readonly SectionResult[];
  readonly complete: boolean;
}

/** One section's latest figures and the run that measured them (bench/results.json). */
interface SavedSection {
  readonly result: SectionResult;
  readonly started: string;
  readonly seconds: number;
  readonly command: string;
  readonly load: string;
  readonly quick: boolean;
  readonly machine: readonly string[];
}

const resultsFile = path.join(benchDir, 'results.json');

function readSections(): Partial<Record<SectionId, SavedSection>> {
  if (!existsSync(resultsFile)) return {};
  return (JSON.parse(readFileSync(resultsFile, 'utf8')) as { sections: Partial<Record<SectionId, SavedSection>> }).sections;
}

/** The saved sections in the bench's order, as BENCHMARKS.md shows them. */
function savedInOrder(sections: Partial<Record<SectionId, SavedSection>>): SavedSection[] {
  return ORDER.flatMap((id) => sections[id] ?? []);
}

function machine(): string[] {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return [
    `- **CPU**: ${model}, ${cpus.length} logical cores (\`os.cpus()\`); ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB RAM; ${os.type()} ${os.release()} ${os.arch()}`,
    `- **Node**: ${process.version} (V8 ${process.versions.v8})`,
    `- **Peers**: liqe ${versionOf('liqe')}, sift ${versionOf('sift')}, mingo ${versionOf('mingo')}; harness tinybench ${versionOf('tinybench')}, autocannon ${versionOf('autocannon')}, undici ${versionOf('undici')}; ckql on chevrotain ${versionOf('chevrotain')}`,
  ];
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.render) return renderSaved();
  const config = makeConfig(flags.quick);
  const selected = flags.only.length > 0 ? ORDER.filter((s) => flags.only.includes(s)) : ORDER;
  const started = new Date();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(', ');
  const log = (line: string) => console.error(line);
  console.error(`bench: ${flags.quick ? 'quick' : 'full'} run of ${selected.join(', ')} on ${os.cpus()[0]?.model.trim()} × ${os.cpus().length}, Node ${process.version}, load average ${load}`);

  buildCkql(log);
  const results: SectionResult[] = [];
  const timings = new Map<string, number>();
  for (const id of selected) {
    const t0 = performance.now();
    try {
      results.push(await SECTIONS[id].run(config, log));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.error(`bench: section ${id} failed: ${message}`);
      if (process.env.CKQL_BENCH_DEBUG === '1' && error instanceof Error) console.error(error.stack);
      results.push({ id, title: SECTIONS[id].title, tables: [], targets: [], notes: [], error: message });
    }
    timings.set(id, (performance.now() - t0) / 1000);
    console.error(`bench: ${id} took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    (globalThis as { gc?: () => void }).gc?.();
  }
  const seconds = (Date.now() - started.getTime()) / 1000;

  for (const r of results) {
    console.log(`\n== ${r.title} ==`);
    if (r.error) console.log(`not measured: ${r.error}`);
    for (const t of r.tables) console.log('\n' + renderText(t));
  }
  const targets = results.flatMap((r) => r.targets);
  console.log('\n' + renderText({
    title: 'Targets',
    headers: ['target', 'goal', 'measured', 'status'],
    rows: targets.map((t) => [`${t.section}: ${t.what}`, t.goal, t.measured, metMark(t.met)]),
  }));
  console.log(`\n${flags.quick ? 'quick' : 'full'} run: ${seconds.toFixed(0)} s`);

  const complete = !flags.quick && flags.only.length === 0;
  const command = `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`;
  const sectionSeconds = new Map(results.map((r) => [r.id, timings.get(r.id) ?? 0]));
  const info: RunInfo = { started, seconds, command, load, quick: flags.quick, machine: machine() };
  if (!existsSync(cacheDir)) mkdirSync(cacheDir, { recursive: true });
  const saved: SavedRun = { ...info, started: started.toISOString(), results, complete };
  writeFileSync(path.join(cacheDir, 'last-run.json'), JSON.stringify(saved, null, 2));
  if (complete) writeFileSync(path.join(cacheDir, 'last-full-run.json'), JSON.stringify(saved, null, 2));
  if (complete || flags.write) {
    const sections = complete ? {} : readSections();
    for (const result of results) {
      // a section that failed keeps its last figures (the failure is printed above)
      if (result.error !== undefined && sections[result.id as SectionId] !== undefined) continue;
      sections[result.id as SectionId] = {
        result, started: started.toISOString(), seconds: sectionSeconds.get(result.id) ?? 0, command, load, quick: flags.quick, machine: info.machine,
      };
    }
    writeFileSync(resultsFile, `${JSON.stringify({ sections }, null, 1)}\n`);
    writeFileSync(path.join(rootDir, 'BENCHMARKS.md'), markdown(savedInOrder(sections)));
    console.error('bench: wrote bench/results.json and BENCHMARKS.md');
  } else {
    console.error('bench: partial or quick run, BENCHMARKS.md left as it is (add --write to replace it)');
  }
  if (results.some((r) => r.error)) process.exitCode = 1;
}

/** `--render`: BENCHMARKS.md again from bench/results.json, with the current analysis. */
function renderSaved(): void {
  const sections = savedInOrder(readSections());
  if (sections.length === 0) usage('--render needs bench/results.json (run npm run bench first)');
  writeFileSync(path.join(rootDir, 'BENCHMARKS.md'), markdown(sections));
  console.error('bench: rewrote BENCHMARKS.md from bench/results.json');
}

function markdown(sections: readonly SavedSection[]): string {
  const results = sections.map((section) => section.result);
  const newest = [...sections].sort((a, b) => b.started.localeCompare(a.started))[0];
  const runs = [...new Map(sections.map((section) => [`${section.started} ${section.command}`, section])).values()];
  const out: string[] = [
    '# Benchmarks',
    '',
    '<!-- Written by `npm run bench` (bench/run.ts) from bench/results.json. Edit bench/analysis.md for the prose at the end, not this file. -->',
    '',
    'ckql beside the libraries people would pick instead (liqe, sift, mingo) and beside the floor for each job (`JSON.parse`, a hand-written loop, a bare `node:http` server, a raw `undici.request`). Each section\'s figures come from one run, side by side with its peers; the run is named under the section\'s heading. Times are medians; "A ÷ B" is A\'s median over B\'s.',
    '',
    `- **Runs**: ${runs.map((run) => `\`${run.command}\` at ${run.started} (load average at start ${run.load})${run.quick ? ', **a --quick smoke run: short budgets, smaller sizes; not for conclusions**' : ''}`).join('; ')}`,
    ...(newest?.machine ?? []),
    '',
    '## Targets',
    '',
    '| section | target | goal | measured | status |',
    '| --- | --- | --- | --- | --- |',
    ...results.flatMap((r) => r.targets.map((t) => `| ${t.section} | ${t.what} | ${t.goal} | ${t.measured.replace(/\|/g, '\\|')} | ${t.met === null ? 'reported' : t.met ? '✅ met' : '❌ missed'} |`)),
    ...results.filter((r) => r.error).map((r) => `| ${r.id} | — | — | not measured: ${r.error?.replace(/\|/g, '\\|')} | ❌ not measured |`),
    '',
  ];
  for (const section of sections) {
    const r = section.result;
    out.push(`## ${r.title}`, '', `*Measured by \`${section.command}\` at ${section.started} in ${section.seconds.toFixed(0)} s (load average at start ${section.load}).*`, '');
    if (r.error) out.push(`Not measured: ${r.error}`, '');
    for (const t of r.tables) out.push(renderMarkdown(t), '');
    for (const n of r.notes) out.push(n, '');
  }
  const analysis = path.join(benchDir, 'analysis.md');
  if (existsSync(analysis)) out.push(readFileSync(analysis, 'utf8').trim(), '');
  return out.join('\n');
}

await main();
