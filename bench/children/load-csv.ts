/**
 * One load of a CSV file in a fresh process, with --expose-gc.
 *
 *   load-csv.ts ckql <file>        loadResources, as `ckql query --data` and `ckql serve` read it
 *   load-csv.ts csv-parse <file>   the file read whole and parsed by csv-parse/sync into records
 *                                  (how the loader read files before it streamed them; no table)
 *
 * Prints one JSON line: rows, ms, peak RSS (bytes, the process's high-water
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

const { loadResources } = await ckqlModules.load();
const before = settled();
const started = performance.now();
let rows: number;
let kept: unknown;
if (mode === 'ckql') {
  const [table] = await loadResources([file]);
  rows = table?.rows.length ?? 0;
  kept = table;
} else {
  const records = parse(readFileSync(file, 'utf8'), { bom: true, skip_empty_lines: true, relax_quotes: true }) as string[][];
  rows = records.length - 1;
  kept = records;
}
const ms = performance.now() - started;
const heldBytes = settled() - before;
process.stdout.write(JSON.stringify({ rows, ms, peakRss: process.resourceUsage().maxRSS * 1024, heldBytes, kept: kept === undefined ? 0 : 1 }) + '\n');
