/**
 * One load of a data file in a fresh process, with --expose-gc.
 *
 *   load-csv.ts ckql <file>        loadResources (CSV or NDJSON), as `ckql query --data` and `ckql serve` read it
 *   load-csv.ts csv-parse <file>   the file read whole and parsed by csv-parse/sync into records
 *                                  (how the loader read CSV before it streamed it; no table)
 *   load-csv.ts split-parse <file> the file read whole, split into lines, each JSON.parse'd
 *                                  (how the loader read NDJSON before it streamed it; no table)
 *
 * Prints one JSON line: rows, ms, cpuMs, peak RSS (bytes, the process's high-water
 * mark), and the heap still held after a full GC.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { ckqlModules } from '../lib/ckql.js';

const [mode, file] = process.argv.slice(2) as [string, string];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('load-csv.ts needs --expose-gc');
const settled = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const { loadResources } = await ckqlModules.loadResources();
const before = settled();
const cpu = process.cpuUsage();
const started = performance.now();
let rows: number;
let kept: unknown;
if (mode === 'ckql') {
  const [table] = await loadResources([file]);
  rows = table?.rows.length ?? 0;
  kept = table;
} else if (mode === 'split-parse') {
  const records = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
  rows = records.length;
  kept = records;
} else {
  const records = parse(readFileSync(file, 'utf8'), { bom: true, skip_empty_lines: true, relax_quotes: true }) as string[][];
  rows = records.length - 1;
  kept = records;
}
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
const heldBytes = settled() - before;
process.stdout.write(JSON.stringify({ rows, ms, cpuMs: (used.user + used.system) / 1000, peakRss: process.resourceUsage().maxRSS * 1024, heldBytes, kept: kept === undefined ? 0 : 1 }) + '\n');
