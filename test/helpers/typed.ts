/**
 * A typed table (one column per CKAN type, values PostgreSQL and the
 * language read alike) and generated queries over it with the whole `where`
 * grammar, `select [distinct]`, `order by`, `limit` and `offset`: what the
 * properties that compare ckql with PostgreSQL run.
 */
import fc from 'fast-check';
import type { Condition, Field, Query, Value } from '../../src/ast.js';
import { plainSelect } from '../../src/ast.js';
import type { FieldInfo, Row, Table } from '../../src/datastore/types.js';
import { literalOf } from './arbitraries.js';

/** A typed table: one column per type, values PostgreSQL and the language read alike. */
export const typedFields: readonly FieldInfo[] = [
  { id: 'n', type: 'int' },
  { id: 'x', type: 'numeric' },
  { id: 't', type: 'text' },
  { id: 'b', type: 'bool' },
  { id: 'd', type: 'date' },
];
export const typedValues: Record<string, readonly (string | number | boolean | null)[]> = {
  n: [0, 1, 2, 7, -3, '2', null],
  x: [0, 2.5, '2.5', 10, -1, null],
  t: ['a', 'A', 'b', 'ab', 'é', '', 'a%', 'x_y', '10', '9', null],
  b: [true, false, 'true', 'false', null],
  d: ['2020-01-01', '2021-06-15', '2019-12-31', null],
};

export const typedRows = fc.array(
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

export const typedCondition: fc.Arbitrary<Condition> = fc.letrec<{ c: Condition }>((tie) => ({
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

export const typedQuery: fc.Arbitrary<Query> = fc
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
    if (parts.select) query.select = plainSelect(parts.select.map(node), span);
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

export const typedTables = fc.sample(typedRows, { seed: 7, numRuns: 1 }).map((rows): Table => ({
  id: '00000000-0000-4000-8000-0000000000b0',
  aliases: ['typed'],
  fields: [{ id: '_id', type: 'int' }, ...typedFields],
  rows: rows.map((row, i) => ({ _id: i + 1, ...row })),
}));
