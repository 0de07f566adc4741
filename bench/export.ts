/**
 * `ckql export` by each path, side by side in one run, against `ckql serve`
 * over HTTP on 127.0.0.1 (the memory engine; 2.11 for the dump and offset
 * paths, 2.12 for next_page): wall time, records per second, requests, and
 * the growth of the exporting process's RSS, over one table of `--rows`
 * records. The paths write the same file (a test checks it); this says
 * what each costs.
 *
 *   npx tsx bench/export.ts [--rows 200000] [--page-size 10000]
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '../src/client/connect.js';
import { loadResources } from '../src/engine/node/load-resources.js';
import { startServer } from '../src/server/server.js';
import { exportRecords } from '../src/session/export.js';
import type { ExportPath } from '../src/session/export.js';

const { values } = parseArgs({ options: { rows: { type: 'string' }, 'page-size': { type: 'string' } } });
const rows = Number(values.rows ?? 200_000);
const pageSize = Number(values['page-size'] ?? 10_000);

const dir = mkdtempSync(join(tmpdir(), 'ckql-bench-export-'));
let text = 'station,day,value,note\n';
for (let i = 0; i < rows; i++) text += `S${i % 97},2023-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')},${(i * 7.31) % 1000},row ${i}\n`;
writeFileSync(join(dir, 'readings.csv'), text);
const tables = await loadResources([join(dir, 'readings.csv')]);
const server211 = await startServer({ tables, port: 0 });
const server212 = await startServer({ tables, port: 0, ckan: '2.12' });

const runs: [ExportPath, string][] = [['dump', server211.url], ['next_page', server212.url], ['offset', server211.url]];
console.log(`ckql export of ${rows.toLocaleString('en-US')} records (${(statSync(join(dir, 'readings.csv')).size / 2 ** 20).toFixed(1)} MiB of CSV), pages of ${pageSize}, node ${process.version}`);
for (const [path, url] of runs) {
  const client = connect({ url, target: url === server212.url ? 'ckan-2.12' : 'ckan-2.11' });
  global.gc?.();
  const rss = process.memoryUsage().rss;
  let peak = rss;
  const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const summary = await exportRecords({ client, input: 'readings', file: join(dir, `out-${path}.csv`), path, pageSize, fieldsFile: false });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(watch);
  await client.close();
  console.log(
    `${path.padEnd(9)} ${seconds.toFixed(2).padStart(6)} s  ${Math.round(summary.records / seconds).toLocaleString('en-US').padStart(9)} records/s  ` +
      `${String(summary.requests).padStart(3)} requests  RSS +${((peak - rss) / 2 ** 20).toFixed(0)} MiB`,
  );
}
await server211.close();
await server212.close();
rmSync(dir, { recursive: true, force: true });
