/**
 * The executor's paging against portals (docs/executor.md, Correct paging):
 * a stub portal that shuffles records with equal sort keys between requests
 * loses and repeats nothing; one that applies `distinct` to a page, as CKAN
 * 2.11.3–2.11.5 do, still gives the whole answer; a plan with a limit stops
 * at the page that holds its last record (requests counted against
 * `ckql serve`); and an aborted signal stops a run within one batch.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { plan } from '../../src/compile/compile.js';
import type { Target } from '../../src/compile/plan.js';
import type { Row, SearchRequest, Table } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { residualTest } from '../../src/engine/memory/evaluate-query.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { ckqlInProcess, ndjson } from '../cli/run-ckql.js';
import { propertyParameters } from '../helpers/arbitraries.js';
import { startStubPortal, type StubPortal } from '../helpers/stub-portal.js';
import { big } from '../server/tables.js';

const letters = ['a', 'b', 'c', 'd', 'e'];
const cats: Table = tableFromRows(Array.from({ length: 5_000 }, (_, i) => ({ n: i, cat: letters[(i * 7) % 5]! })), { alias: 'cats' });
// The first thousand records hold two statuses; the other two come later.
const statuses: Table = tableFromRows(
  Array.from({ length: 20_000 }, (_, i) => ({ n: i, status: i < 1_000 ? (i % 2 === 0 ? 'enrolled' : 'completed') : ['enrolled', 'completed', 'failed', 'withdrawn'][i % 4]! })),
  { alias: 'statuses' },
);

let shuffling: StubPortal;
let ckan2115: StubPortal;
let ckan212: StubPortal;
const clients: DatastoreClient[] = [];
const client = (url: string, target?: Target): DatastoreClient => {
  const made = connect({ url, retries: 0, ...(target === undefined ? {} : { target }) });
  clients.push(made);
  return made;
};

beforeAll(async () => {
  shuffling = await startStubPortal({ tables: [cats], shuffleTies: true });
  ckan2115 = await startStubPortal({ tables: [statuses], version: '2.11.5', distinctOnePage: true });
  ckan212 = await startStubPortal({ tables: [statuses], version: '2.12.0' });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([shuffling, ckan2115, ckan212].map((p) => p?.close()));
});

async function all(c: DatastoreClient, query: string, pageSize = 1_000): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const row of c.searchAll(query, { pageSize })) rows.push(row);
  return rows;
}

const ids = (rows: readonly Row[]) => rows.map((r) => r['_id'] as number);

describe('a portal that orders ties differently on every request', () => {
  it('is such a portal: paging by a sort with ties, as the request says, drops and repeats records', async () => {
    const c = client(shuffling.url, 'ckan-2.11');
    const seen: number[] = [];
    for (let offset = 0; offset < 5_000; offset += 700) {
      seen.push(...ids((await c.search({ resource_id: 'cats', sort: 'cat asc', limit: 700, offset })).records));
    }
    expect(seen).toHaveLength(5_000);
    expect(new Set(seen).size).toBeLessThan(5_000);
  });

  it('gives every record exactly once through searchAll, a plan, and the CLI --all', async () => {
    const c = client(shuffling.url, 'ckan-2.11');
    const sorted = await all(c, 'from cats order by cat', 700);
    expect(new Set(ids(sorted)).size).toBe(5_000);
    expect(sorted.map((r) => r['cat'])).toEqual([...sorted.map((r) => r['cat'] as string)].sort());
    // The order the client asked for ends in _id.
    expect(shuffling.requests.at(-1)?.sort).toBe('cat asc, _id asc');
    const planned = await all(c, 'from cats where n != 3 order by cat desc', 700);
    expect(new Set(ids(planned)).size).toBe(4_999);
    const cli = await ckqlInProcess(['query', '--url', shuffling.url, '--target', 'ckan-2.11', '--all', '--format', 'ndjson', 'from cats order by cat']);
    expect(cli.code).toBe(0);
    expect(new Set(ndjson(cli.stdout).map((r) => (r as Row)['_id'])).size).toBe(5_000);
  });
});

describe('select distinct on CKAN 2.11.5, which applies it to one page', () => {
  it('is such a portal: distinct: true gives one page\'s distinct records, and the whole count', async () => {
    const answer = await client(ckan2115.url, 'ckan-2.11').search({ resource_id: 'statuses', fields: ['status'], distinct: true, limit: 100 });
    expect(answer.records).toHaveLength(2);
    expect(answer.total).toBe(4);
  });

  it('gives every distinct record: ckql applies distinct itself on a 2.11 target', async () => {
    const c = client(ckan2115.url);
    const before = ckan2115.requests.length;
    const result = await c.search('from statuses select distinct status order by status');
    expect(result.records.map((r) => r['status'])).toEqual(['completed', 'enrolled', 'failed', 'withdrawn']);
    expect(c.target).toBe('ckan-2.11');
    expect(ckan2115.requests.slice(before).every((r) => r.distinct === undefined)).toBe(true);
    const everything = await all(c, 'from statuses select distinct status');
    expect(everything.map((r) => r['status'])).toEqual(['enrolled', 'completed', 'failed', 'withdrawn']);
  });

  it('sends distinct to CKAN 2.12, which applies it before the page: one request', async () => {
    const c = client(ckan212.url);
    const before = ckan212.requests.length;
    const result = await c.search('from statuses select distinct status order by status');
    expect(result.records.map((r) => r['status'])).toEqual(['completed', 'enrolled', 'failed', 'withdrawn']);
    expect(ckan212.requests.slice(before)).toEqual([expect.objectContaining({ distinct: true, fields: ['status'] })]);
  });
});

describe('a plan with a limit against ckql serve', () => {
  let server211: RunningServer;
  let server212: RunningServer;
  const log: Record<string, string[]> = { 'ckan-2.11': [], 'ckan-2.12': [] };
  beforeAll(async () => {
    server211 = await startServer({ tables: [big], log: (line) => log['ckan-2.11']!.push(line) });
    server212 = await startServer({ tables: [big], ckan: '2.12', log: (line) => log['ckan-2.12']!.push(line) });
  });
  afterAll(async () => {
    await server211?.close();
    await server212?.close();
  });

  // Each holds a condition no CKAN can say, so every query runs as a plan.
  const conditions = ['parity != even', 'n not in (1, 2, 3, 5, 8, 13, 21)', 'n >= 2000 and parity != odd', 'n between 100 and 400 and parity != even', 'parity != odd and parity != even'];

  it.each(['ckan-2.11', 'ckan-2.12'] as const)('on %s reads up to the page that holds its last record, and no further', async (target) => {
    const c = client(target === 'ckan-2.11' ? server211.url : server212.url, target);
    const arb = fc.record({
      where: fc.constantFrom(...conditions),
      desc: fc.boolean(),
      limit: fc.integer({ min: 0, max: 40 }),
      offset: fc.integer({ min: 0, max: 10 }),
      pageSize: fc.integer({ min: 1, max: 600 }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ where, desc, limit, offset, pageSize }) => {
        const query = `from big where ${where}${desc ? ' order by n desc' : ''} offset ${offset} limit ${limit}`;
        const planned = plan(query, { target });
        // Where the last record asked for sits in the order the portal pages in (a hand count over the memory evaluator).
        const request = planned.request as SearchRequest;
        const scanned = evaluate({ ...request, limit: 32_000 }, big, target === 'ckan-2.12' ? { ckan: '2.12' } : {}).records;
        const keep = residualTest(planned.residual!, big.fields);
        const matches = scanned.flatMap((row, i) => (keep(row, i) ? [i] : []));
        const need = offset + limit;
        const expected = need === 0 ? 1 : need <= matches.length ? Math.ceil((matches[need - 1]! + 1) / pageSize) : Math.max(1, Math.ceil(scanned.length / pageSize));
        // A scan of the whole table in pages of a few records is thousands of requests, and seconds; the
        // page arithmetic is the same at 150 (a small page still meets the runs that stop early).
        fc.pre(expected <= 150);
        log[target]!.length = 0;
        const run = await c.stream(query, { pageSize });
        const rows: Row[] = [];
        for await (const row of run.records) rows.push(row);
        expect(rows.map((r) => r['n'])).toEqual(matches.slice(offset, need).map((i) => scanned[i]!['n']));
        expect(run.read().requests).toBe(expected);
        expect(log[target]!.filter((line) => line.includes('datastore_search ')).length).toBe(expected);
      }),
      propertyParameters(40),
    );
  }, 60_000);

  it('limit 0 reads the one page that opens the scan, not on to the first match', async () => {
    // its own server: the shared one may still log a request an earlier test stopped reading
    const lines: string[] = [];
    const own = await startServer({ tables: [big], log: (line) => lines.push(line) });
    try {
      const run = await client(own.url, 'ckan-2.11').stream('from big where n >= 2000 and parity != odd limit 0', { pageSize: 599 });
      const rows: Row[] = [];
      for await (const row of run.records) rows.push(row);
      expect([rows.length, run.read().requests, lines.filter((line) => line.includes('datastore_search ')).length]).toEqual([0, 1, 1]);
    } finally {
      await own.close();
    }
  });

  it('stops within one batch of an aborted signal', async () => {
    const lines: string[] = [];
    const own = await startServer({ tables: [big], log: (line) => lines.push(line) });
    const c = client(own.url, 'ckan-2.11');
    const controller = new AbortController();
    const run = await c.stream('from big where parity != even', { all: true, pageSize: 10, signal: controller.signal });
    const first = await run.records.next();
    expect(first.value).toMatchObject({ n: 1 });
    controller.abort(new DatastoreError('ABORTED', 'interrupted'));
    const error = await (async () => {
      for await (const _ of run.records) void _;
    })().catch((e: unknown) => e);
    expect((error as DatastoreError).code).toBe('ABORTED');
    // The count and the first page; none was asked for after the abort.
    await own.close();
    expect(lines.filter((line) => line.includes('datastore_search ')).length).toBe(2);
  });
});
