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
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Condition, Field, Query, Value } from '../../src/ast.js';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { plan } from '../../src/compile/compile.js';
import type { SqlRequest } from '../../src/compile/sql.js';
import type { FieldInfo, Row, SearchResult, Table } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { literalOf, propertyParameters, propertyRuns, queryOverTable, tableRowsArb } from '../helpers/arbitraries.js';
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

test('evaluate over the ckan-2.11 plan equals evaluateQuery', () => {
  const arb = tableRowsArb.chain(({ names, rows }) =>
    queryOverTable('t', names, { rows, wholeWhere: true }).map((query) => ({ table: tableFromRows(rows, { alias: 't' }), query })),
  );
  fc.assert(
    fc.property(arb, ({ table, query }) => {
      const planned = plan(query, { target: 'ckan-2.11' });
      const reference = answerOf(outcomeOf(() => evaluateQuery(query, table)));
      expect(answerOf(outcomeOf(() => evaluatePlan(planned, table)))).toEqual(reference);
    }),
    propertyParameters(),
  );
}, 120_000);

// ---------------------------------------------------------------- over HTTP

const samples = fc.sample(tableRowsArb, { seed: 20_261_123, numRuns: 4 });
const tables: Table[] = samples.map(({ rows }, i) => tableFromRows(rows, { id: `00000000-0000-4000-8000-0000000000a${i}`, alias: `p${i}` }));

let server: RunningServer;
let client: DatastoreClient;

beforeAll(async () => {
  server = await startServer({ tables, port: 0 });
  client = connect({ url: server.url, retries: 0 });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

test('the client running the ckan-2.11 plan against the local server equals evaluateQuery', async () => {
  const arb = fc.integer({ min: 0, max: tables.length - 1 }).chain((i) =>
    queryOverTable(`p${i}`, samples[i]!.names, { rows: samples[i]!.rows, wholeWhere: true }).map((query) => ({ index: i, query })),
  );
  await fc.assert(
    fc.asyncProperty(arb, async ({ index, query }) => {
      const reference = answerOf(outcomeOf(() => evaluateQuery(query, tables[index]!)));
      expect(answerOf(await asyncOutcomeOf(() => client.search(query)))).toEqual(reference);
    }),
    propertyParameters(Math.max(40, Math.floor(propertyRuns / 20))),
  );
}, 120_000);

// ---------------------------------------------------------------- the sql text on PGlite

/** A typed table: one column per type, values PostgreSQL and the language read alike. */
const typedFields: readonly FieldInfo[] = [
  { id: 'n', type: 'int' },
  { id: 'x', type: 'numeric' },
  { id: 't', type: 'text' },
  { id: 'b', type: 'bool' },
  { id: 'd', type: 'date' },
];
const typedValues: Record<string, readonly (string | number | boolean | null)[]> = {
  n: [0, 1, 2, 7, -3, '2', null],
  x: [0, 2.5, '2.5', 10, -1, null],
  t: ['a', 'A', 'b', 'ab', 'é', '', 'a%', 'x_y', '10', '9', null],
  b: [true, false, 'true', 'false', null],
  d: ['2020-01-01', '2021-06-15', '2019-12-31', null],
};

const typedRows = fc.array(
  fc.record(
    Object.fromEntries(typedFields.map((f) => [f.id, fc.constantFrom(...typedValues[f.id]!.filter((v) => typeof v !== 'string' || f.type === 'text' || f.type === 'date'))])),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Row>,
  { minLength: 1, maxLength: 10 },
);

const fieldArb = fc.constantFrom(...typedFields.map((f) => f.id));
const node = (name: string): Field => ({ kind: 'field', span: { start: 0, end: 0 }, name });
const valueFor = (name: string): fc.Arbitrary<Value> => fc.constantFrom(...typedValues[name]!).map(literalOf);
const span = { start: 0, end: 0 };

const typedCondition: fc.Arbitrary<Condition> = fc.letrec<{ c: Condition }>((tie) => ({
  c: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fieldArb.chain((f) => valueFor(f).map((value): Condition => ({ kind: 'eq', span, field: node(f), value }))),
    fieldArb.chain((f) => fc.array(valueFor(f), { maxLength: 3 }).map((values): Condition => ({ kind: 'in', span, field: node(f), values }))),
    fieldArb.chain((f) =>
      fc.tuple(fc.constantFrom('ne' as const, 'lt' as const, 'lte' as const, 'gt' as const, 'gte' as const), valueFor(f))
        .map(([op, value]): Condition => ({ kind: 'compare', span, op, field: node(f), value }))),
    fieldArb.chain((f) => fc.tuple(valueFor(f), valueFor(f)).map(([low, high]): Condition => ({ kind: 'between', span, field: node(f), low, high }))),
    fc.tuple(fc.constantFrom('a%', '%b', '_', '%\\%%', 'x\\_y', '%', 'A%', '1%'), fc.boolean())
      .map(([p, ignoreCase]): Condition => ({ kind: 'like', span, field: node('t'), pattern: { kind: 'string', span, value: p }, ignoreCase })),
    fieldArb.map((f): Condition => ({ kind: 'is-null', span, field: node(f) })),
    tie('c').map((inner): Condition => ({ kind: 'not', span, condition: inner })),
    fc.tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('c'), { minLength: 2, maxLength: 3 }))
      .map(([kind, conditions]): Condition => ({ kind, span, conditions })),
  ),
})).c;

const typedQuery: fc.Arbitrary<Query> = fc
  .record(
    {
      where: typedCondition,
      select: fc.uniqueArray(fc.constantFrom('_id', ...typedFields.map((f) => f.id)), { minLength: 1, maxLength: 3 }),
      order: fc.array(fc.tuple(fieldArb, fc.constantFrom('asc' as const, 'desc' as const), fc.constantFrom(undefined, 'first' as const, 'last' as const)), { minLength: 1, maxLength: 2 }),
      limit: fc.integer({ min: 0, max: 12 }),
      offset: fc.integer({ min: 0, max: 4 }),
    },
    { requiredKeys: [] },
  )
  .map((parts) => {
    const query: { -readonly [K in keyof Query]: Query[K] } = {
      kind: 'query', span, from: { kind: 'from', span, resource: { kind: 'string', span, value: 'typed' } },
    };
    if (parts.where) query.where = { kind: 'where', span, condition: parts.where };
    if (parts.select) query.select = { kind: 'select', span, fields: parts.select.map(node) };
    if (parts.order) {
      query.order = {
        kind: 'order', span,
        keys: parts.order.map(([f, direction, nulls]) => ({ kind: 'sort-key' as const, span, field: node(f), direction, ...(nulls ? { nulls } : {}) })),
      };
    }
    if (parts.limit !== undefined) query.limit = { kind: 'limit', span, value: { kind: 'number', span, value: parts.limit } };
    if (parts.offset !== undefined) query.offset = { kind: 'offset', span, value: { kind: 'number', span, value: parts.offset } };
    return query as Query;
  });

const typedTables = fc.sample(typedRows, { seed: 7, numRuns: 1 }).map((rows): Table => ({
  id: '00000000-0000-4000-8000-0000000000b0',
  aliases: ['typed'],
  fields: [{ id: '_id', type: 'int' }, ...typedFields],
  rows: rows.map((row, i) => ({ _id: i + 1, ...row })),
}));
let ckanSql: CkanSql;

beforeAll(async () => {
  ckanSql = await openCkanSql(typedTables);
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
