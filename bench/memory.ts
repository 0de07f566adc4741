/**
 * Section 4: heap per row after loading flights-200k (against the raw JSON
 * size and against plain `JSON.parse` of the same file), and `searchAll`
 * over a million records keeping the client's heap flat.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunConfig } from './lib/config.js';
import { runChild, startChild } from './lib/child.js';
import { enrolmentsFile, vegaPath } from './lib/data.js';
import { formatBytes, formatCount, formatRatio } from './lib/harness.js';
import { ckqlModules } from './lib/ckql.js';
import type { SectionResult } from './lib/report.js';

interface HeapJson { rows: number; fileBytes: number; heap: number }
interface HeapCkql extends HeapJson { heapWithTextCache: number; qTotal: number }
interface SearchAllResult {
  records: number; expected: number; pages: number; requests: number; pageSize: number; seconds: number; baseline: number;
  firstId: unknown; lastId: unknown;
  rawMin: number; rawMax: number; settledFirst: number; settledLast: number; settledMin: number; settledMax: number; settledCount: number;
  rss: number[];
}

/** A plan no CKAN request can say (`!=`): the executor pages through every record and filters them as they come. */
const PLAN_QUERY = 'from enrolments where status != withdrawn';

/** "Flat": the settled heap may move by less than this while the whole table streams through. */
const FLAT_LIMIT = 8 * 1024 * 1024;
/** "Flat" for the process's RSS, which also holds V8's free pages and the socket buffers. */
const RSS_FLAT_LIMIT = 24 * 1024 * 1024;

/** The requests and records a limit-3 plan reads (in this process: it counts, it does not weigh). */
async function limitedPlan(url: string): Promise<{ requests: number; read: number; records: number }> {
  const { connect } = await ckqlModules.client();
  const client = connect({ url, target: 'ckan-2.11' });
  try {
    const result = await client.search(`${PLAN_QUERY} limit 3`);
    return { requests: result.read?.requests ?? -1, read: result.read?.records ?? -1, records: result.records.length };
  } finally {
    await client.close();
  }
}

export async function benchMemory(config: RunConfig, log: (line: string) => void): Promise<SectionResult> {
  const temp = mkdtempSync(path.join(tmpdir(), 'ckql-bench-'));
  try {
    const file = path.join(temp, 'flights.json');
    copyFileSync(vegaPath('flights-200k.json'), file);
    log('memory: heap after JSON.parse and after loadResources (flights-200k, separate processes)');
    const json = await runChild<HeapJson>('heap-load.ts', ['json', file], { exposeGc: true });
    const ckql = await runChild<HeapCkql>('heap-load.ts', ['ckql', file], { exposeGc: true });
    if (ckql.rows !== json.rows) throw new Error(`memory bench: loadResources read ${ckql.rows} rows, JSON.parse ${json.rows}`);
    const perRow = (bytes: number) => bytes / json.rows;

    log(`memory: searchAll over ${formatCount(config.searchAllRows)} records, page size ${config.searchAllPageSize}`);
    const server = await startChild('serve.ts', ['ckql', enrolmentsFile(config.searchAllRows)]);
    let all: SearchAllResult;
    let planned: SearchAllResult;
    let limited: { requests: number; read: number; records: number };
    try {
      all = await runChild<SearchAllResult>('search-all.ts', [server.ready, 'enrolments', String(config.searchAllPageSize), String(config.searchAllRows)], { exposeGc: true });
      log(`memory: a 2.11 plan (${PLAN_QUERY}) over the same records`);
      planned = await runChild<SearchAllResult>('search-all.ts', [server.ready, 'enrolments', String(config.searchAllPageSize), String(config.searchAllRows), PLAN_QUERY, 'ckan-2.11'], { exposeGc: true });
      limited = await limitedPlan(server.ready);
    } finally {
      await server.stop();
    }
    if (all.records !== all.expected) throw new Error(`memory bench: searchAll yielded ${all.records} records, expected ${all.expected}`);
    const growth = all.settledLast - all.settledFirst;
    const spread = all.settledMax - all.settledMin;
    const flat = Math.abs(growth) < FLAT_LIMIT && spread < FLAT_LIMIT;
    // RSS grows while V8 sizes its heap for the work; flat means it stops growing: the first tenth of the run is warm-up.
    const steady = planned.rss.slice(Math.floor(planned.rss.length / 10));
    const rssFirst = steady[0] ?? 0;
    const rssLast = steady[steady.length - 1] ?? 0;
    const rssGrowth = rssLast - rssFirst;
    const rssSpread = Math.max(...steady) - Math.min(...steady);
    const rssFlat = Math.abs(rssGrowth) < RSS_FLAT_LIMIT && rssSpread < RSS_FLAT_LIMIT;

    return {
      id: 'memory',
      title: '4. Memory',
      tables: [
        {
          title: `Memory: flights-200k.json (${formatCount(json.rows)} rows, ${formatBytes(json.fileBytes)}), heap retained after a full GC`,
          headers: ['what', 'heap', 'per row', 'heap ÷ raw JSON', 'vs JSON.parse'],
          rows: [
            ['raw JSON file', formatBytes(json.fileBytes), `${perRow(json.fileBytes).toFixed(1)} B`, '1×', '—'],
            ['JSON.parse (floor: plain objects)', formatBytes(json.heap), `${perRow(json.heap).toFixed(1)} B`, formatRatio(json.heap / json.fileBytes), '1×'],
            ['ckql loadResources', formatBytes(ckql.heap), `${perRow(ckql.heap).toFixed(1)} B`, formatRatio(ckql.heap / json.fileBytes), formatRatio(ckql.heap / json.heap)],
            ['… plus the q text cache (whole, after 17 `q`s)', formatBytes(ckql.heapWithTextCache), `${perRow(ckql.heapWithTextCache).toFixed(1)} B`, formatRatio(ckql.heapWithTextCache / json.fileBytes), formatRatio(ckql.heapWithTextCache / json.heap)],
          ],
        },
        {
          title: `Memory: client searchAll over ${formatCount(all.records)} records (${all.pages} pages of ${all.pageSize}, ${all.seconds.toFixed(1)} s), client process heap`,
          headers: ['measure', 'value'],
          rows: [
            ['heapUsed before the first request', formatBytes(all.baseline)],
            ['heapUsed per page, raw: min … max', `${formatBytes(all.rawMin)} … ${formatBytes(all.rawMax)} (range ${formatBytes(all.rawMax - all.rawMin)})`],
            [`heapUsed after GC (${all.settledCount} samples): first → last`, `${formatBytes(all.settledFirst)} → ${formatBytes(all.settledLast)} (growth ${formatBytes(growth)})`],
            ['heapUsed after GC: max − min', formatBytes(spread)],
            ['records/s', formatCount(Math.round(all.records / all.seconds))],
          ],
        },
        {
          title: `Memory: a ckan-2.11 plan over the same ${formatCount(config.searchAllRows)} records (\`${PLAN_QUERY}\`, every record, ${planned.requests} requests, ${planned.seconds.toFixed(1)} s), client process`,
          headers: ['measure', 'value'],
          rows: [
            ['records kept / requests', `${formatCount(planned.records)} / ${planned.requests}`],
            [`RSS after GC, after the first tenth (${steady.length} samples): first → last`, `${formatBytes(rssFirst)} → ${formatBytes(rssLast)} (growth ${formatBytes(rssGrowth)})`],
            ['RSS after GC, after the first tenth: max − min', formatBytes(rssSpread)],
            ['RSS after GC, whole run: min … max', `${formatBytes(Math.min(...planned.rss))} … ${formatBytes(Math.max(...planned.rss))}`],
            [`heapUsed after GC: first → last`, `${formatBytes(planned.settledFirst)} → ${formatBytes(planned.settledLast)}`],
            ['records/s read', formatCount(Math.round(config.searchAllRows / planned.seconds))],
          ],
        },
        {
          title: 'Plans that stop early: `from enrolments where status != withdrawn limit 3` against ckql serve (CKAN 2.11)',
          headers: ['measure', 'value'],
          rows: [
            ['requests', String(limited.requests)],
            ['records read / given', `${formatCount(limited.read)} / ${limited.records}`],
          ],
        },
      ],
      targets: [
        {
          section: 'memory', what: 'heap per row after loading flights-200k', goal: 'reported against raw JSON (no fixed goal)',
          measured: `${perRow(ckql.heap).toFixed(0)} B/row = ${formatRatio(ckql.heap / json.fileBytes)} the raw JSON, ${formatRatio(ckql.heap / json.heap)} JSON.parse`, met: null,
        },
        {
          section: 'memory', what: `searchAll over ${formatCount(all.records)} records keeps heap flat`, goal: `settled heap moves < ${formatBytes(FLAT_LIMIT)}`,
          measured: `growth ${formatBytes(growth)}, max − min ${formatBytes(spread)}`, met: flat,
        },
        {
          section: 'memory', what: `a plan paging ${formatCount(config.searchAllRows)} records from a portal keeps the client's RSS flat`, goal: `RSS after GC moves < ${formatBytes(RSS_FLAT_LIMIT)}`,
          measured: `growth ${formatBytes(rssGrowth)}, max − min ${formatBytes(rssSpread)}`, met: rssFlat,
        },
        {
          section: 'memory', what: 'a planned `limit 3` against ckql serve, the first page holding the answer', goal: '1 request',
          measured: `${limited.requests} request${limited.requests === 1 ? '' : 's'}, ${formatCount(limited.read)} records read`, met: limited.requests === 1,
        },
      ],
      notes: [
        'Heap figures come from child processes started with `--expose-gc`: heapUsed after repeated full GCs, minus the same before loading (modules are imported before the baseline). `loadResources` reads a temporary copy of the file, as `ckql serve` would. The text-cache row runs 17 `q` evaluates that match nothing (the first reads the rows, each later one builds a sixteenth of the text), so the per-table normalized text is whole and kept.',
        `searchAll: the ckql server runs in its own process over the generated enrolments; the client process samples its own heapUsed after every page (raw) and after a forced GC every few pages (settled). "Flat" means the settled heap stays within ${formatBytes(FLAT_LIMIT)} while every record passes through the iterator (the records themselves are counted and dropped).`,
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
