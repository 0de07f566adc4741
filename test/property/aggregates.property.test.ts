/**
 * Generated tables (nulls, mixed case and accented keys, exact decimals,
 * empty tables) and generated grouped, joined and faceted queries give the
 * same rows on the memory engine, through the `sql` target on a PGlite
 * server's `datastore_search_sql`, and as CKAN 2.11 and 2.12 plans against
 * `ckql serve`. `avg` is compared within a relative 1e-9 (PostgreSQL's is
 * exact `numeric`, the memory engine's a double); everything else exactly.
 * Each run reloads PGlite, so the suite makes a few runs;
 * `CKQL_AGGREGATE_RUNS=120` makes a deep one (about a minute).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import type { Row, Table } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { pgliteEngine } from '../../src/engine/pglite/engine.js';
import type { SqlEngine } from '../../src/engine/sql/engine.js';
import { loadTables } from '../../src/engine/sql/load.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { parse } from '../../src/syntax/parse.js';
import { expectSameRows } from '../helpers/aggregate-fixtures.js';
import { typedTable } from '../engine/sql/engines.js';

/** The tables the servers answer from: replaced by each run. */
let current: Table[] = [];
const lookup = {
  find: (idOrAlias: string) => current.find((t) => t.id === idOrAlias || t.aliases.includes(idOrAlias)),
  get tables() {
    return current;
  },
};

let servers: RunningServer[] = [];
let clients: DatastoreClient[] = [];
let sql: SqlEngine;

beforeAll(async () => {
  sql = await pgliteEngine({});
  const memory = memoryEngine(lookup);
  servers = await Promise.all([
    startServer({ engine: memory, ckan: '2.11', port: 0 }),
    startServer({ engine: memory, ckan: '2.12', port: 0 }),
    startServer({ engine: sql, ckan: '2.11', port: 0 }),
  ]);
  clients = [
    connect({ url: servers[0]!.url, target: 'ckan-2.11' }),
    connect({ url: servers[1]!.url, target: 'ckan-2.12' }),
    connect({ url: servers[2]!.url, target: 'sql' }),
  ];
});

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const server of servers) await server.close();
  await sql?.close();
});

const KEYS = ['a', 'A', 'b', 'é', 'e', 'a:b'] as const;

const row = fc.record({
  k: fc.option(fc.constantFrom(...KEYS), { nil: null }),
  n: fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }),
  d: fc.option(fc.integer({ min: -300, max: 300 }).map((x) => x / 20), { nil: null }),
  b: fc.option(fc.boolean(), { nil: null }),
});

const tableArb = fc.array(row, { maxLength: 25 }).map((rows) => typedTable('t', [['k', 'text'], ['n', 'int4'], ['d', 'numeric'], ['b', 'bool']], rows));
const otherArb = fc.array(fc.record({ k: fc.option(fc.constantFrom(...KEYS), { nil: null }), w: fc.integer({ min: 0, max: 3 }) }), { maxLength: 8 })
  .map((rows) => typedTable('m', [['k', 'text'], ['w', 'int4']], rows));

const aggregates = [
  'count(*)', 'count(k)', 'count(distinct k)', 'sum(n)', 'sum(d)', 'avg(d)', 'avg(n)', 'min(k)', 'max(k)', 'max(n)', 'min(d)', 'min(b)', 'max(b)',
  // of expressions (docs/expressions.md)
  'sum(n * d)', 'avg(coalesce(n, 0))', 'max(lower(k))', 'count(distinct lower(k))', 'min(d - n)', 'sum(abs(n) + 1)',
] as const;
const wheres = ['', 'where n > 0', 'where k in (a, "é", "a:b")', 'where d is not null', 'where k != b'] as const;

/** A grouped query over `t`: keys, aggregates, where, having, limit; the order is the first aggregate's, then the keys'. */
const groupedArb = fc.record({
  keys: fc.subarray(['k', 'b', 'n', 'bucket(d, 2.5)', 'lower(k)'] as const, { maxLength: 2 }),
  aggs: fc.subarray([...aggregates], { minLength: 1, maxLength: 3 }),
  where: fc.constantFrom(...wheres),
  having: fc.boolean(),
  order: fc.constantFrom('', 'asc', 'desc'),
  limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
}).map(({ keys, aggs, where, having, order, limit }) => {
  const select = [...keys, ...aggs.map((a, i) => `${a} as x${i}`)].join(', ');
  return [
    `from t ${where}`,
    keys.length === 0 ? '' : `group by ${keys.join(', ')}`,
    `select ${select}`,
    having ? 'having count(*) >= 2' : '',
    order === '' ? '' : `order by x0 ${order}`,
    limit === undefined ? '' : `limit ${limit}`,
  ].filter((part) => part !== '').join(' ');
});

const joinedArb = fc.record({
  left: fc.boolean(),
  // `n` and `b` unqualified: only t has them (the sql target reads both resources' fields to say so)
  agg: fc.constantFrom('count(*)', 'sum(t.n)', 'count(distinct t.k)', 'avg(t.d)', 'sum(n)', 'max(b)', 'min(t.b)', 'sum(t.n * m.w)', 'count(distinct lower(t.k) || m.w)'),
}).map(({ left, agg }) => `from t ${left ? 'left ' : ''}join m on t.k = m.k group by m.w select m.w, ${agg} as x`);

async function memoryRows(tables: readonly Table[], text: string): Promise<{ rows: Row[]; total: number | undefined }> {
  const stream = await memoryEngine(tables).query(parse(text), { total: true, all: true });
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return { rows, total: stream.total };
}

async function sameEverywhere(tables: Table[], text: string): Promise<void> {
  current = tables;
  await loadTables(sql.db, tables, { replace: true, indexes: false });
  await sql.refresh();
  const want = await memoryRows(tables, text);
  for (const client of clients) {
    const got = await client.search(text, { total: true });
    expectSameRows(got.records as Row[], want.rows, `${client.target ?? ''}: ${text}`);
    expect(got.total, `${client.target ?? ''} total: ${text}`).toBe(want.total);
  }
}

describe('aggregates on every target', () => {
  it('grouped queries over generated tables', { timeout: 120_000 }, async () => {
    await fc.assert(fc.asyncProperty(tableArb, groupedArb, async (table, text) => sameEverywhere([table], text)), { numRuns: Number(process.env.CKQL_AGGREGATE_RUNS ?? 12) });
  });

  it('joins over generated tables', { timeout: 120_000 }, async () => {
    await fc.assert(fc.asyncProperty(tableArb, otherArb, joinedArb, async (table, other, text) => sameEverywhere([table, other], text)), { numRuns: Number(process.env.CKQL_AGGREGATE_RUNS ?? 8) });
  });

  it('facets over generated tables', { timeout: 120_000 }, async () => {
    const facetArb = fc.record({ where: fc.constantFrom(...wheres), top: fc.integer({ min: 1, max: 4 }) })
      .map(({ where, top }) => `from t ${where} facet k top ${top}, d by 2.5, b limit 0`);
    await fc.assert(
      fc.asyncProperty(tableArb, facetArb, async (table, text) => {
        current = [table];
        await loadTables(sql.db, [table], { replace: true, indexes: false });
        await sql.refresh();
        const want = (await memoryEngine([table]).query(parse(text), { total: true })).facets;
        for (const client of clients) expect((await client.search(text)).facets, `${client.target ?? ''}: ${text}`).toEqual(want);
      }),
      { numRuns: Number(process.env.CKQL_AGGREGATE_RUNS ?? 8) },
    );
  });
});
