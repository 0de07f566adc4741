/**
 * One load of a CSV file by a peer of the memory loader, in a fresh process.
 *
 *   load-peers.ts duckdb <file>   DuckDB's read_csv into a table of an in-memory database
 *                                 (@duckdb/node-api, a bench-only dependency; its default threads)
 *   load-peers.ts pglite <file> [dir]
 *                                 ckql's loadFiles (COPY in batches) into a PGlite in memory, as
 *                                 `ckql serve --engine pglite` loads, or in the folder `dir`, as
 *                                 `ckql load --db dir` does; with the bin's wasm tiering (src/cli/wasm-tiering.ts)
 *
 * Prints one JSON line: rows, ms (the load alone, modules and the database
 * started before), cpuMs (every thread of the process), peak RSS in bytes.
 */
import { tierWasmLate } from '../../src/cli/wasm-tiering.js';
import { ckqlModules } from '../lib/ckql.js';

const [mode, file, dir] = process.argv.slice(2) as [string, string, string | undefined];
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
  const db = await openPglite(dir);
  cpu = process.cpuUsage();
  started = performance.now();
  const [loaded] = await loadFiles(db, [file], { replace: true });
  rows = loaded?.rows ?? 0;
  await db.close();
} else {
  throw new Error(`load-peers.ts: no mode ${mode}`);
}
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
// Once the line is written, nothing is left to wait for: an open handle of a database's threads must not keep
// the process (and the bench) waiting. A write to a pipe completes later, hence the callback.
process.stdout.write(JSON.stringify({ rows, ms, cpuMs: (used.user + used.system) / 1000, peakRss: process.resourceUsage().maxRSS * 1024 }) + '\n', () => process.exit(0));
