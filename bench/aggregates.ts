/**
 * Section 11, aggregates and joins (docs/aggregates.md), side by side on
 * the same rows:
 * - `group by` (one key, three aggregates) on object rows: the memory
 *   engine's hash aggregate beside a hand-written `Map` loop (the floor),
 *   PGlite and PostgreSQL (the query only; loading is not timed);
 * - a `ckan-2.11` plan aggregating every row through `ckql serve` in
 *   another process: its requests, the client's peak RSS, and the time
 *   split into waiting (server and transfer), parsing and folding;
 * - a join of 200k × 2k rows: the memory engine beside a hand-written hash join.
 */
import { ckqlModules } from './lib/ckql.js';
import { withLoadedPostgres } from './lib/postgres.js';
import { courseRows, enrolmentRows, saleRows } from './lib/agg-data.js';
import type { EnrolmentRow, SaleRow } from './lib/agg-data.js';
import { runChild, startChild } from './lib/child.js';
import type { RunConfig } from './lib/config.js';
import { blackhole, collectGarbage, formatBytes, formatRatio } from './lib/harness.js';
import type { SectionResult, Table, Target } from './lib/report.js';

export const GROUP_QUERY = 'from enrolments group by subject select subject, count(*) as n, sum(grade), avg(grade)';
export const PRICE_QUERY = 'from sales group by category select category, count(*) as n, avg(price)';
export const JOIN_QUERY = 'from enrolments e join courses c on e.course = c.code select e.student, c.title, e.grade';

interface Timed { readonly median: number; readonly min: number }

/** Median and fastest of `runs` timed calls after one warm-up. */
async function time(runs: number, run: () => unknown): Promise<Timed> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    blackhole(await run());
    times.push(performance.now() - t0);
  }
  return timed(times);
}

/**
 * Median and fastest of `runs` timed calls of each of two contenders after
 * a warm-up each, interleaved (a noisy minute on the shared machine hits
 * both), a full GC before each call (neither pays for the other's garbage).
 */
async function timePair(runs: number, floor: () => unknown, ckql: () => unknown): Promise<[Timed, Timed]> {
  await floor();
  await ckql();
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < runs; i++) {
    for (const [k, run] of [floor, ckql].entries()) {
      collectGarbage();
      const t0 = performance.now();
      blackhole(await run());
      times[k]!.push(performance.now() - t0);
    }
  }
  return [timed(times[0]), timed(times[1])];
}

function timed(times: number[]): Timed {
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, min: times[0]! };
}

const ms = (t: Timed | undefined): string => (t === undefined ? 'no server' : t.median < 10 ? `${t.median.toFixed(2)} ms` : `${t.median.toFixed(0)} ms`);

/** The floor: one pass, a Map from the key to its running count, sum and non-null count. */
export function handGroup(rows: readonly EnrolmentRow[]): unknown {
  const groups = new Map<string, { n: number; sum: number; count: number }>();
  for (const row of rows) {
    let g = groups.get(row.subject);
    if (g === undefined) groups.set(row.subject, (g = { n: 0, sum: 0, count: 0 }));
    g.n++;
    if (row.grade !== null) {
      g.sum += row.grade;
      g.count++;
    }
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([subject, g]) => ({ subject, n: g.n, sum: g.sum, avg: g.count === 0 ? null : g.sum / g.count }));
}

/** The floor of `PRICE_QUERY`: a Map from the category to its row count, and a double sum and count of its prices. */
export function handPrices(rows: readonly SaleRow[]): unknown {
  const groups = new Map<string, { n: number; sum: number; count: number }>();
  for (const row of rows) {
    let g = groups.get(row.category);
    if (g === undefined) groups.set(row.category, (g = { n: 0, sum: 0, count: 0 }));
    g.n++;
    if (row.price !== null) {
      g.sum += row.price;
      g.count++;
    }
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([category, g]) => ({ category, n: g.n, avg: g.count === 0 ? null : g.sum / g.count }));
}

/** The floor of a join: a Map of the small side by key, the large side streamed past it. */
export function handJoin(enrolments: readonly EnrolmentRow[], courses: readonly { code: string; title: string }[]): unknown {
  const byCode = new Map<string, { code: string; title: string }[]>();
  for (const c of courses) {
    const list = byCode.get(c.code);
    if (list === undefined) byCode.set(c.code, [c]);
    else list.push(c);
  }
  const out: { student: string; title: string; grade: number | null }[] = [];
  for (const e of enrolments) {
    const matches = byCode.get(e.course);
    if (matches === undefined) continue;
    for (const c of matches) out.push({ student: e.student, title: c.title, grade: e.grade });
  }
  return out;
}

async function drain(stream: { batches: AsyncGenerator<readonly unknown[], void, undefined> }): Promise<number> {
  let n = 0;
  for await (const batch of stream.batches) n += batch.length;
  return n;
}

export async function benchAggregates(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const rows = config.quick ? 100_000 : 1_000_000;
  const runs = config.quick ? 3 : 7;
  const tables: Table[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const [{ memoryEngine }, { tableFromRows }, { parse }, { pgliteEngine }] = await Promise.all([
    ckqlModules.memoryEngine(), ckqlModules.load(), ckqlModules.parse(), ckqlModules.pglite(),
  ]);

  // ---- group by on object rows
  log(`aggregates: ${rows.toLocaleString('en')} rows`);
  const data = enrolmentRows(rows);
  const table = tableFromRows(data as never, { alias: 'enrolments' });
  const memory = memoryEngine([table]);
  const query = parse(GROUP_QUERY);
  const [hand, mem] = await timePair(runs, () => handGroup(data), async () => drain(await memory.query(query, { all: true })));
  log('aggregates: loading PGlite');
  const pglite = await pgliteEngine({ tables: [table], load: { indexes: false } });
  const lite = await time(Math.min(runs, 5), async () => drain(await pglite.query(query, { all: true })));
  await pglite.close();

  // ---- the same grouping over 2-decimal prices (numeric: the exact sum), beside the hand loop on doubles
  const sales = saleRows(rows);
  const salesTable = tableFromRows(sales as never, { alias: 'sales' });
  const salesMemory = memoryEngine([salesTable]);
  const priceQuery = parse(PRICE_QUERY);
  const [handP, memP] = await timePair(runs, () => handPrices(sales), async () => drain(await salesMemory.query(priceQuery, { all: true })));
  const serverUrl = process.env['CKQL_BENCH_PG_URL'] ?? process.env['CKQL_TEST_PG_URL'];
  let native: Timed | undefined;
  let nativePrices: Timed | undefined;
  if (serverUrl !== undefined) {
    log('aggregates: loading PostgreSQL');
    await withLoadedPostgres(serverUrl, [table, salesTable], async (engine) => {
      native = await time(Math.min(runs, 5), async () => drain(await engine.query(query, { all: true })));
      nativePrices = await time(Math.min(runs, 5), async () => drain(await engine.query(priceQuery, { all: true })));
    });
  }
  tables.push({
    title: `\`${GROUP_QUERY}\` on ${rows.toLocaleString('en')} object rows (20 groups; median of ${runs})`,
    headers: ['who', 'median', '÷ hand-written Map loop'],
    rows: [
      ['hand-written Map loop (the floor)', ms(hand), '1.00×'],
      ['memory engine (hash aggregate)', ms(mem), formatRatio(mem.median / hand.median)],
      ['PGlite (one SQL statement)', ms(lite), formatRatio(lite.median / hand.median)],
      ['PostgreSQL 15 (one SQL statement)', ms(native), native === undefined ? '–' : formatRatio(native.median / hand.median)],
    ],
  });
  targets.push({ section: 'aggregates', what: `memory \`group by\` (1 key, 3 aggregates) on ${rows.toLocaleString('en')} rows ÷ hand-written Map loop`, goal: '≤ 2×', measured: formatRatio(mem.median / hand.median), met: mem.median <= 2 * hand.median });
  targets.push({ section: 'aggregates', what: 'memory `group by` faster than PGlite on the same rows', goal: '< 1×', measured: formatRatio(mem.median / lite.median), met: mem.median < lite.median });
  targets.push({
    section: 'aggregates', what: 'memory `group by` faster than PostgreSQL on the same rows', goal: '< 1×',
    measured: native === undefined ? 'no server' : formatRatio(mem.median / native.median), met: native === undefined ? null : mem.median < native.median,
  });

  tables.push({
    title: `\`${PRICE_QUERY}\` on ${rows.toLocaleString('en')} object rows, prices of 2 decimals (\`numeric\`: an exact sum; 20 groups; median of ${runs})`,
    headers: ['who', 'median', '÷ hand-written Map loop'],
    rows: [
      ['hand-written Map loop on doubles (the floor)', ms(handP), '1.00×'],
      ['memory engine (hash aggregate, exact sum)', ms(memP), formatRatio(memP.median / handP.median)],
      ['PostgreSQL 15 (one SQL statement, numeric)', ms(nativePrices), nativePrices === undefined ? '–' : formatRatio(nativePrices.median / handP.median)],
    ],
  });
  targets.push({ section: 'aggregates', what: `memory \`group by\` with \`avg\` of 2-decimal prices on ${rows.toLocaleString('en')} rows ÷ hand-written Map loop on doubles`, goal: '≤ 1.5×', measured: formatRatio(memP.median / handP.median), met: memP.median <= 1.5 * handP.median });
  targets.push({
    section: 'aggregates', what: 'memory `group by` with `avg` of 2-decimal prices faster than PostgreSQL', goal: '< 1×',
    measured: nativePrices === undefined ? 'no server' : formatRatio(memP.median / nativePrices.median), met: nativePrices === undefined ? null : memP.median < nativePrices.median,
  });

  // ---- a ckan-2.11 plan through ckql serve
  log('aggregates: ckql serve and the 2.11 plan');
  const server = await startChild('serve-agg.ts', [String(rows)]);
  try {
    const plan = await runChild<{ wallMs: number; requests: number; groups: number; baselineRss: number; peakRss: number; maxRss: number; waitMs: number; parseMs: number; foldMs: number; handFoldMs: number }>('agg-plan.mjs', [server.ready, String(rows)]);
    const wanted = Math.ceil(rows / 32_000) + 1;
    // The server's own share: the same page requests answered in this process by the same engine, written as JSON.
    let serverMs = 0;
    for (let offset = 0; offset < rows; offset += 32_000) {
      const t0 = performance.now();
      const page = await memory.search({ resource_id: 'enrolments', fields: ['_id', 'subject', 'grade'], sort: '_id asc', limit: 32_000, offset, include_total: false });
      blackhole(JSON.stringify(page));
      serverMs += performance.now() - t0;
    }
    tables.push({
      title: `A \`ckan-2.11\` plan of \`${GROUP_QUERY}\` over ${rows.toLocaleString('en')} rows through \`ckql serve\` (another process)`,
      headers: ['figure', 'value'],
      rows: [
        ['requests (a limit: 0 count, then pages of 32,000)', `${plan.requests} (⌈rows / 32,000⌉ + 1 = ${wanted})`],
        ['groups', String(plan.groups)],
        ['wall time of the plan', `${plan.wallMs.toFixed(0)} ms`],
        ['client peak RSS (sampled every 5 ms)', formatBytes(plan.peakRss)],
        ['… of which before the query (Node and ckql\'s modules, no tsx loader)', formatBytes(plan.baselineRss)],
        ['the same pages by hand: server (engine + JSON, measured apart)', `${serverMs.toFixed(0)} ms`],
        ['… transfer (waiting for the answers − server)', `${Math.max(0, plan.waitMs - serverMs).toFixed(0)} ms`],
        ['… JSON.parse of the pages', `${plan.parseMs.toFixed(0)} ms`],
        ['… aggregate: folding them into the groups (ckql\'s hash aggregate, as the plan does)', `${plan.foldMs.toFixed(0)} ms`],
        ['… … the same fold as a hand-written Map loop', `${plan.handFoldMs.toFixed(0)} ms`],
        ['… the rest of the plan\'s wall time (its first run in a fresh process: compiling, the client\'s checks of each answer)', `${Math.max(0, plan.wallMs - plan.waitMs - plan.parseMs - plan.foldMs).toFixed(0)} ms`],
      ],
    });
    targets.push({ section: 'aggregates', what: `2.11 plan over ${rows.toLocaleString('en')} rows: requests`, goal: `= ${wanted}`, measured: String(plan.requests), met: plan.requests === wanted });
    targets.push({ section: 'aggregates', what: `2.11 plan over ${rows.toLocaleString('en')} rows: client peak RSS`, goal: '≤ 200 MiB', measured: formatBytes(plan.peakRss), met: plan.peakRss <= 200 * 1024 * 1024 });
  } finally {
    await server.stop();
  }

  // ---- join 200k × 2k
  const joinRows = config.quick ? 50_000 : 200_000;
  const enrolments = enrolmentRows(joinRows);
  const courses = courseRows(2_000);
  const joinMemory = memoryEngine([tableFromRows(enrolments as never, { alias: 'enrolments' }), tableFromRows(courses as never, { alias: 'courses' })]);
  const joinQuery = parse(JOIN_QUERY);
  const [handJ, memJ] = await timePair(runs, () => handJoin(enrolments, courses), async () => drain(await joinMemory.query(joinQuery, { all: true })));
  tables.push({
    title: `\`${JOIN_QUERY}\`: ${joinRows.toLocaleString('en')} × 2,000 rows, every joined record (median of ${runs})`,
    headers: ['who', 'median', '÷ hand-written hash join'],
    rows: [
      ['hand-written hash join (the floor)', ms(handJ), '1.00×'],
      ['memory engine (hash join)', ms(memJ), formatRatio(memJ.median / handJ.median)],
    ],
  });
  targets.push({ section: 'aggregates', what: `memory join ${joinRows.toLocaleString('en')} × 2k ÷ hand-written hash join`, goal: '≤ 3×', measured: formatRatio(memJ.median / handJ.median), met: memJ.median <= 3 * handJ.median });
  notes.push(
    'The hand-written loops are the floor: what a person would write for this one query, with no parsing, checking, typing, null or canonical-text handling. ' +
      'The prices table is the case the grades (whole numbers) never reach: `numeric` prices of 2 decimals, most of which are no whole number of cents times 0.01 as doubles; the memory engine sums them exactly (whole cents in a double, each price\'s places found by a round trip), the hand loop in a double. ' +
      'The memory engine keys groups by the value itself (canonical text only for JSON values, merged at the end), sums numbers exactly, and checks every name before the first row; ' +
      'its fold is one function generated per query (each field a property load by its literal name, each value read once, `sum` and `avg` of one field one state, as the hand loop keeps one sum and count for both), and its join reads keys and builds each record the same way. ' +
      'Each hand loop and the memory engine run in turns, a full GC before each call, so a busy minute or the other\'s garbage hits both alike. ' +
      'PGlite and PostgreSQL time the query only (the rows were loaded first, without indexes). The plan runs in its own process against `ckql serve` in another, so its RSS is the client\'s alone; ' +
      'that process runs ckql as built by tsc, without the tsx loader (which alone held ≈ 60 MiB more before the first request).',
  );
  return { id: 'aggregates', title: '11. Aggregates and joins', tables, targets, notes };
}
