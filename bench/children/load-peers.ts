/**
 * One load of a CSV file by a peer of the memory loader, in a fresh process.
 *
 *   load-peers.ts duckdb <file>   DuckDB's read_csv into a table of an in-memory database
 *                                 (@duckdb/node-api, a bench-only dependency; its default threads)
 *   load-peers.ts pglite <file>   ckql's loadFiles into an in-memory PGlite (what
 *                                 `ckql serve --engine pglite` and `ckql load` run: COPY in batches),
 *                                 with the bin's wasm tiering (src/cli/wasm-tiering.ts)
 *
 * Prints one JSON line: rows, ms (the load alone, modules and the database
 * started before), cpuMs (every thread of the process), peak RSS in bytes.
 */
import { tierWasmLate } from '../../src/cli/wasm-tiering.js';
import { ckqlModules } from '../lib/ckql.js';

const [mode, file] = process.argv.slice(2) as [string, string];
let rows = 0;
let started = 0;
let cpu = process.cpuUsage();
if (mode === 'duckdb') {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  cpu = process.cpuUsage();
  started = performance.now();
  await connection.run(`CREATE TABLE sales AS SELECT * FROM read_csv(${`'${file.replaceAll("'", "''")}'`})`);
  const counted = await connection.runAndReadAll('SELECT count(*) FROM sales');
  rows = Number(counted.getRows()[0]?.[0]);
} else if (mode === 'pglite') {
  tierWasmLate();
  const [{ openPglite }, { loadFiles }] = await Promise.all([ckqlModules.pgliteDb(), ckqlModules.loadFiles()]);
  const db = await openPglite();
  cpu = process.cpuUsage();
  started = performance.now();
  const [loaded] = await loadFiles(db, [file], { replace: true });
  rows = loaded?.rows ?? 0;
} else {
  throw new Error(`load-peers.ts: no mode ${mode}`);
}
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
process.stdout.write(JSON.stringify({ rows, ms, cpuMs: (used.user + used.system) / 1000, peakRss: process.resourceUsage().maxRSS * 1024 }) + '\n');
