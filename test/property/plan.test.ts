/**
 * Plans answer as the language means (docs/beyond-the-request.md):
 * 1. the memory evaluator over a plan (its request, then the residual locally)
 *    equals the reference walker `evaluateQuery`;
 * 2. the client running the plan against the local server equals it;
 * 3. the `sql` target's text on PGlite, over CKAN's table layout, equals it
 *    outside the documented differences (no search, no distinct: PostgreSQL
 *    leaves the order of DISTINCT rows open; values of the column's type).
 * Queries use the whole `where` grammar: comparisons, between, like, is null,
 * not, and `or` across fields.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Condition, Field, Query } from '../../src/ast.js';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { plan } from '../../src/compile/compile.js';
import type { SqlRequest } from '../../src/compile/sql.js';
import type { Row, SearchResult, Table } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { literalOf, propertyParameters, propertyRuns, queryOverTable, tableRowsArb } from '../helpers/arbitraries.js';
import { typedQuery, typedTables } from '../helpers/typed.js';
import { openCkanSql, type CkanSql } from '../helpers/ckan-sql.js';
import { asyncOutcomeOf, outcomeOf } from '../helpers/outcome.js';
import { evaluatePlan } from '../helpers/plan.js';
import { recordsWithoutRank } from '../helpers/rank.js';

/**
 * What two answers must share: the records and the total, or a Validation
 * Error on both sides. The server adds CKAN's rank columns to a search; the
 * language has none, so they are left out.
 */
function answerOf(outcome: { ok: SearchResult } | { error: unknown }): unknown {
  if ('ok' in outcome) return { records: recordsWithoutRank(outcome.ok.records), total: outcome.ok.total };
  const error = outcome.error;
  return error instanceof DatastoreError ? { status: error.status } : { thrown: String(error) };
}

test.each(['ckan-2.11', 'ckan-2.12'] as const)('evaluate over the %s plan equals evaluateQuery', (target) => {
  const arb = tableRowsArb.chain(({ names, rows }) =>
    queryOverTable('t', names, { rows, wholeWhere: true }).map((query) => ({ table: tableFromRows(rows, { alias: 't' }), query })),
  );
  fc.assert(
    fc.property(arb, ({ table, query }) => {
      // a search text a portal would read as a JSON object is refused (SEARCH_READ_AS_FIELDS): no plan to run
      const outcome = outcomeOf(() => plan(query, { target }));
      if ('error' in outcome) {
        expect(outcome.error).toMatchObject({ code: 'SEARCH_READ_AS_FIELDS' });
        return;
      }
      const planned = outcome.ok;
      const reference = answerOf(outcomeOf(() => evaluateQuery(query, table)));
      expect(answerOf(outcomeOf(() => evaluatePlan(planned, table)))).toEqual(reference);
    }),
    propertyParameters(Math.max(100, Math.floor(propertyRuns / 5))),
  );
}, 120_000);

/**
 * Numbers beyond 2^53: the loader keeps an integer it cannot hold exactly
 * (and a decimal with more digits than a double) as its text, in an `int8`
 * or `numeric` column. Queries compare those columns with such numbers, as
 * number literals (which the parser reads as the nearest double) and as text.
 */
const bigCells = ['9007199254740993', '9007199254740992', '-9007199254740993', '9223372036854775807', '18446744073709551617', '12', '0', ''];
const longDecimals = ['1.0000000000000000001', '2.5', '12345678901234567890.5', '-0.1', ''];
const bigRows = fc.sample(
  fc.array(fc.tuple(fc.constantFrom(...bigCells), fc.constantFrom(...bigCells.slice(0, 3), '5', ''), fc.constantFrom(...longDecimals)), { minLength: 6, maxLength: 12 }),
  { seed: 2_053, numRuns: 1 },
)[0]!;
let bigTable: Table;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ckql-big-'));
  try {
    const file = join(dir, 'big.csv');
    await writeFile(file, ['wide,int8,dec', ...bigRows.map((cells) => cells.join(','))].join('\n'));
    bigTable = (await loadResources(file))[0]!;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.each(['ckan-2.11', 'ckan-2.12'] as const)('evaluate over the %s plan equals evaluateQuery on integers beyond 2^53 and long decimals', (target) => {
  // The loader's types and values are what the property is about: text kept in number columns.
  expect(bigTable.fields.map((f) => f.type).slice(2)).toEqual(['int8', 'numeric']);
  expect(bigTable.rows.some((row) => typeof row['int8'] === 'string')).toBe(true);
  const names = bigTable.fields.map((f) => f.id).filter((n) => n !== '_id');
  // Values to compare with: the cells as text, and as the numbers the parser would read.
  const asNumbers = bigTable.rows.map((row) => Object.fromEntries(names.map((n) => [n, typeof row[n] === 'string' ? Number(row[n]) : row[n]])) as Row);
  const arb = queryOverTable('big', names, { rows: [...bigTable.rows, ...asNumbers], wholeWhere: true, unknownFields: false });
  let big = 0;
  fc.assert(
    fc.property(arb, (query) => {
      if (/\d{16,}|e\+/.test(JSON.stringify(query.where ?? null))) big++;
      const reference = answerOf(outcomeOf(() => evaluateQuery(query, bigTable)));
      expect(answerOf(outcomeOf(() => evaluatePlan(plan(query, { target }), bigTable)))).toEqual(reference);
    }),
    propertyParameters(Math.max(200, Math.floor(propertyRuns / 5))),
  );
  // The property says little unless many queries hold such a number.
  expect(big).toBeGreaterThan(10);
}, 120_000);

// ---------------------------------------------------------------- over HTTP

const samples = fc.sample(tableRowsArb, { seed: 20_261_123, numRuns: 4 });
const tables: Table[] = samples.map(({ rows }, i) => tableFromRows(rows, { id: `00000000-0000-4000-8000-0000000000a${i}`, alias: `p${i}` }));

let server: RunningServer;
let client: DatastoreClient;
let server212: RunningServer;
let client212: DatastoreClient;

beforeAll(async () => {
  server = await startServer({ tables, port: 0 });
  client = connect({ url: server.url, retries: 0, target: 'ckan-2.11' });
  server212 = await startServer({ tables, port: 0, ckan: '2.12' });
  client212 = connect({ url: server212.url, retries: 0, target: 'ckan-2.12' });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await client212?.close();
  await server212?.close();
});

test.each(['ckan-2.11', 'ckan-2.12'] as const)('the client running the %s plan against the local server of that version equals evaluateQuery', async (target) => {
  const c = target === 'ckan-2.11' ? client : client212;
  const arb = fc.integer({ min: 0, max: tables.length - 1 }).chain((i) =>
    queryOverTable(`p${i}`, samples[i]!.names, { rows: samples[i]!.rows, wholeWhere: true }).map((query) => ({ index: i, query })),
  );
  await fc.assert(
    fc.asyncProperty(arb, async ({ index, query }) => {
      const reference = answerOf(outcomeOf(() => evaluateQuery(query, tables[index]!)));
      expect(answerOf(await asyncOutcomeOf(() => c.search(query, { total: true })))).toEqual(reference);
    }),
    propertyParameters(Math.max(40, Math.floor(propertyRuns / 20))),
  );
}, 120_000);

// ---------------------------------------------------------------- the sql text on PGlite

const node = (name: string): Field => ({ kind: 'field', span: { start: 0, end: 0 }, name });
const span = { start: 0, end: 0 };

let ckanSql: CkanSql;

beforeAll(async () => {
  ckanSql = await openCkanSql([...typedTables, bigTable]);
}, 30_000);

afterAll(async () => {
  await ckanSql?.close();
});

test('the sql text on PGlite equals evaluateQuery', async () => {
  const table = typedTables[0]!;
  await fc.assert(
    fc.asyncProperty(typedQuery, async (query) => {
      const reference = evaluateQuery(query, table);
      const sql = await ckanSql.run((plan(query, { target: 'sql' }).request as SqlRequest).sql, table);
      const keysOf = (records: readonly Row[]) => records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v ?? null])));
      expect(keysOf(sql.records)).toEqual(keysOf(reference.records));
      if (sql.records.length > 0) expect(sql.total).toBe(reference.total);
    }),
    propertyParameters(Math.max(60, Math.floor(propertyRuns / 10))),
  );
}, 120_000);

test('the sql text on PGlite keeps the records, in the order, evaluateQuery gives on integers beyond 2^53 and long decimals (exact, as PostgreSQL compares and sorts)', async () => {
  const names = bigTable.fields.map((f) => f.id).filter((n) => n !== '_id');
  // Comparisons, between and null tests with the cells, as text and as the numbers the parser reads
  // (`=` is canonical-text equality here and a cast in PostgreSQL: README, differences).
  const cells = bigTable.rows.flatMap((row) => names.map((n) => row[n])).filter((v): v is string | number => v !== null && v !== undefined);
  const value = fc.constantFrom(...cells, ...cells.map(Number)).map(literalOf);
  const name = fc.constantFrom(...names);
  const condition: fc.Arbitrary<Condition> = fc.letrec<{ c: Condition }>((tie) => ({
    c: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.tuple(name, fc.constantFrom('lt' as const, 'lte' as const, 'gt' as const, 'gte' as const), value)
        .map(([f, op, v]): Condition => ({ kind: 'compare', span, op, field: node(f), value: v })),
      fc.tuple(name, value, value).map(([f, low, high]): Condition => ({ kind: 'between', span, field: node(f), low, high })),
      name.map((f): Condition => ({ kind: 'is-null', span, field: node(f) })),
      tie('c').map((inner): Condition => ({ kind: 'not', span, condition: inner })),
      fc.tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('c'), { minLength: 2, maxLength: 3 }))
        .map(([kind, conditions]): Condition => ({ kind, span, conditions })),
    ),
  })).c;
  const arb = fc.tuple(condition, fc.array(fc.tuple(name, fc.constantFrom('asc' as const, 'desc' as const)), { maxLength: 2 }))
    .map(([where, keys]): Query => ({
      kind: 'query', span, from: { kind: 'from', span, resource: { kind: 'string', span, value: 'big' } },
      where: { kind: 'where', span, condition: where },
      ...(keys.length === 0 ? {} : { order: { kind: 'order', span, keys: keys.map(([f, direction]) => ({ kind: 'sort-key' as const, span, field: node(f), direction })) } }),
    }));
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(arb, async (query) => {
      const reference = outcomeOf(() => evaluateQuery(query, bigTable).records.map((r) => r['_id']));
      // PostgreSQL refuses a decimal compared with an int8 column, which the language compares (README): both must answer.
      const sql = await ckanSql.run((plan(query, { target: 'sql' }).request as SqlRequest).sql, bigTable).catch(() => undefined);
      fc.pre('ok' in reference && sql !== undefined);
      compared++;
      expect(sql!.records.map((r) => r['_id'])).toEqual((reference as { ok: unknown }).ok);
    }),
    propertyParameters(Math.max(100, Math.floor(propertyRuns / 10))),
  );
  expect(compared).toBeGreaterThan(10);
}, 120_000);
