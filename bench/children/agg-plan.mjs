/* global URL, setInterval, clearInterval, performance, fetch -- Node 20 globals (eslint knows only process and console in .mjs files) */
/**
 * The client side of a `ckan-2.11` aggregate plan, in its own process:
 * `agg-plan.mjs <url> <rows>` runs the group by through `connect()` and
 * prints its figures as JSON: requests, wall time, peak RSS (sampled, and
 * the OS's maximum), and the same pages fetched raw to split the time into
 * waiting for answers (server and transfer), JSON parsing and folding (by
 * ckql's hash aggregate, as the plan folds them, and by a hand-written Map
 * loop).
 *
 * JavaScript, not TypeScript, so it runs without the tsx loader: its RSS is
 * what a user's process holds (Node, ckql as built by tsc in
 * bench/.cache/dist, the query), not tsx's loader thread and its copy of
 * every module's source (≈ 60 MiB more before the first request). With
 * CKQL_BENCH_SOURCE=src it imports `src/` and bench/lib/child.ts adds tsx.
 */
const fromSource = process.env.CKQL_BENCH_SOURCE === 'src';
const modules = new URL(fromSource ? '../../src/' : '../.cache/dist/', import.meta.url);
const ext = fromSource ? '.ts' : '.js';

const [url, rowsText] = process.argv.slice(2);
const rows = Number(rowsText);
const QUERY = 'from enrolments group by subject select subject, count(*) as n, sum(grade), avg(grade)';
const { connect } = await import(new URL(`client/connect${ext}`, modules).href);
const load = (file) => import(new URL(file + ext, modules).href);

// What the process holds before the query: Node and ckql's modules.
const baseline = process.memoryUsage().rss;
let peak = baseline;
const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
const client = connect({ url, target: 'ckan-2.11', maxScan: rows + 1 });
const t0 = performance.now();
const result = await client.search(QUERY);
const wallMs = performance.now() - t0;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const groups = result.records.length;
const requests = result.read?.requests ?? -1;
await client.close();

// The same pages, fetched and parsed by hand: what waiting, parsing and folding each take.
const [{ makeAggregator }, { fieldRead }] = await Promise.all([load('engine/memory/aggregate'), load('engine/memory/row-shape')]);
const span = { start: 0, end: 0 };
const grade = fieldRead('grade');
const aggregate = (fn, field) => ({ kind: 'aggregate', span, fn, ...(field === undefined ? {} : { field: { kind: 'field', span, name: field } }) });
// As the plan's aggregate operator makes it (execute/shaped.ts): the key and one read per field.
const aggregator = makeAggregator({
  keys: [fieldRead('subject')],
  aggregates: [
    { aggregate: aggregate('count'), type: undefined },
    { aggregate: aggregate('sum', 'grade'), read: grade, type: 'int4' },
    { aggregate: aggregate('avg', 'grade'), read: grade, type: 'int4' },
  ],
});
let waitMs = 0;
let parseMs = 0;
let foldMs = 0;
let handFoldMs = 0;
const endpoint = `${url}/api/action/datastore_search`;
const sums = new Map();
for (let offset = 0; offset < rows; offset += 32_000) {
  const a = performance.now();
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource_id: 'enrolments', fields: ['_id', 'subject', 'grade'], sort: '_id asc', limit: 32_000, offset, include_total: false }),
  });
  const text = await response.text();
  const b = performance.now();
  const records = JSON.parse(text).result.records;
  const c = performance.now();
  aggregator.addAll(records);
  const d = performance.now();
  for (const r of records) {
    let g = sums.get(r.subject);
    if (g === undefined) sums.set(r.subject, (g = { n: 0, sum: 0, count: 0 }));
    g.n++;
    if (r.grade !== null) { g.sum += r.grade; g.count++; }
  }
  const e = performance.now();
  waitMs += b - a;
  parseMs += c - b;
  foldMs += d - c;
  handFoldMs += e - d;
}
if (aggregator.groups().length !== sums.size) throw new Error('the hash aggregate and the Map loop found different groups');
process.stdout.write(`${JSON.stringify({ wallMs, requests, groups, baselineRss: baseline, peakRss: peak, maxRss: process.resourceUsage().maxRSS * 1024, waitMs, parseMs, foldMs, handFoldMs })}\n`);
