/**
 * The client's `searchAll` over a whole table, in a process of its own with
 * --expose-gc (the server runs in another), sampling this process's heap on
 * every page.
 *
 *   search-all.ts <url> <resource> <pageSize> <expected records> [<query> <target>]
 *
 * With a query, the query runs (a plan for the target: pages, the residual
 * applied locally by the executor) through `client.stream`, instead of the
 * whole resource. Prints one JSON line: records, pages, requests, raw
 * heapUsed range, post-GC heapUsed and RSS series.
 */
import { ckqlModules } from '../lib/ckql.js';

const [url, resource, pageSizeText, expectedText, queryText, target] = process.argv.slice(2) as [string, string, string, string, string?, string?];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('search-all.ts needs --expose-gc');

const { connect } = await ckqlModules.client();
const client = connect({ url, ...(target === undefined ? {} : { target: target as 'ckan-2.11', maxScan: 100_000_000 }) });
const pageSize = Number(pageSizeText);
const expected = Number(expectedText);
// GC after every this many pages: often enough to see a trend, rare enough not to dominate the run
const gcEvery = Math.max(1, Math.floor(expected / pageSize / 40));

gc();
const baseline = process.memoryUsage().heapUsed;
const raw: number[] = [];
const settled: number[] = [];
const settledRss: number[] = [];
let pages = 0;
let records = 0;
let firstId: unknown;
let lastId: unknown;
const started = performance.now();
const run = await client.stream(queryText ?? { resource_id: resource }, {
  all: true,
  pageSize,
  onPage: () => {
    pages++;
    raw.push(process.memoryUsage().heapUsed);
    if (pages % gcEvery === 0) {
      gc();
      const usage = process.memoryUsage();
      settled.push(usage.heapUsed);
      settledRss.push(usage.rss);
    }
  },
});
for await (const row of run.records) {
  if (records === 0) firstId = row._id;
  lastId = row._id;
  records++;
}
const requests = run.read().requests;
const seconds = (performance.now() - started) / 1000;
await client.close();
process.stdout.write(JSON.stringify({
  records, expected, pages, requests, pageSize, seconds, baseline, firstId, lastId,
  rss: settledRss,
  rawMin: Math.min(...raw), rawMax: Math.max(...raw),
  settledFirst: settled[0], settledLast: settled[settled.length - 1],
  settledMin: Math.min(...settled), settledMax: Math.max(...settled), settledCount: settled.length,
}) + '\n');
