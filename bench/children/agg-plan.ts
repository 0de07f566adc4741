/**
 * The client side of a `ckan-2.11` aggregate plan, in its own process:
 * `agg-plan.ts <url> <rows>` runs the group by through `connect()` and
 * prints its figures as JSON: requests, wall time, peak RSS (sampled, and
 * the OS's maximum), and the same pages fetched raw to split the time into
 * waiting for answers (server and transfer), JSON parsing and folding.
 */
import { ckqlModules } from '../lib/ckql.js';

const [url, rowsText] = process.argv.slice(2);
const rows = Number(rowsText);
const QUERY = 'from enrolments group by subject select subject, count(*) as n, sum(grade), avg(grade)';
const [{ connect }, { parse }] = await Promise.all([ckqlModules.client(), ckqlModules.parse()]);

// What the process holds before the query: Node, the loader and ckql's modules.
const baseline = process.memoryUsage().rss;
let peak = baseline;
const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
const client = connect({ url: url!, target: 'ckan-2.11', maxScan: rows + 1 });
const t0 = performance.now();
const result = await client.search(QUERY);
const wallMs = performance.now() - t0;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const groups = result.records.length;
const requests = result.read?.requests ?? -1;
await client.close();

// The same pages, fetched and parsed by hand: what waiting, parsing and folding each take.
parse(QUERY);
let waitMs = 0;
let parseMs = 0;
let foldMs = 0;
const endpoint = `${url!}/api/action/datastore_search`;
const sums = new Map<string, { n: number; sum: number; count: number }>();
for (let offset = 0; offset < rows; offset += 32_000) {
  const a = performance.now();
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource_id: 'enrolments', fields: ['_id', 'subject', 'grade'], sort: '_id asc', limit: 32_000, offset, include_total: false }),
  });
  const text = await response.text();
  const b = performance.now();
  const records = (JSON.parse(text) as { result: { records: { subject: string; grade: number | null }[] } }).result.records;
  const c = performance.now();
  for (const r of records) {
    let g = sums.get(r.subject);
    if (g === undefined) sums.set(r.subject, (g = { n: 0, sum: 0, count: 0 }));
    g.n++;
    if (r.grade !== null) { g.sum += r.grade; g.count++; }
  }
  const d = performance.now();
  waitMs += b - a;
  parseMs += c - b;
  foldMs += d - c;
}
process.stdout.write(`${JSON.stringify({ wallMs, requests, groups, baselineRss: baseline, peakRss: peak, maxRss: process.resourceUsage().maxRSS * 1024, waitMs, parseMs, foldMs })}\n`);
