/**
 * The evaluator against itself: the reference walker `evaluateQuery` equals
 * `evaluate(compile(q))`; adding a condition never adds records; `in (a, b)`
 * is the union of `= a` and `= b`. Tables have mixed types, nulls, missing
 * keys, unicode and awkward field names.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { Condition, Query } from '../../src/ast.js';
import { compile, plan } from '../../src/compile/compile.js';
import { evaluatePlan } from '../helpers/plan.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import type { Row, SearchResult, Table } from '../../src/datastore/types.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import {
  cellPool, conditionArb, literalOf, poolScalar, propertyParameters, propertyRuns, queryOverTable, tableRowsArb,
} from '../helpers/arbitraries.js';
import { outcomeOf } from '../helpers/outcome.js';
import type { Outcome } from '../helpers/outcome.js';

const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
const alias = 't';

const tableWithQuery = tableRowsArb.chain(({ names, rows }) =>
  queryOverTable(alias, names, { rows }).map((query) => ({ names, rows, table: tableFromRows(rows, { id, alias }), query })),
);

/**
 * `evaluate`'s outcome without the `filters` echo: `evaluateQuery` documents
 * that its result has no `filters` key (a where clause need not be a
 * request's filters), and is otherwise the same.
 */
function withoutFilters(outcome: Outcome<SearchResult>): Outcome<SearchResult> {
  if (!('ok' in outcome)) return outcome;
  const { filters: _filters, ...rest } = outcome.ok;
  return { ok: rest };
}

test('evaluateQuery(q, t) deep-equals evaluate(compile(q), t), filters echo aside', () => {
  fc.assert(
    fc.property(tableWithQuery, ({ rows, table, query }) => {
      // On an array column CKAN 2.11 reads a list filter as array equality (`{"a": []}` matches
      // the empty array), not as the language's `in`: the compiler does not yet plan those.
      fc.pre(!table.fields.some((f) => f.type.startsWith('_')));
      const compiled = outcomeOf(() => compile(query));
      fc.pre('ok' in compiled);
      if (!('ok' in compiled)) return;
      expect(outcomeOf(() => evaluateQuery(query, table))).toEqual(withoutFilters(outcomeOf(() => evaluate(compiled.ok, table))));
      // plain records answer as the table built from them (an unknown name is an error on both)
      const overRows = outcomeOf(() => evaluate(compiled.ok, rows));
      const overTable = outcomeOf(() => evaluate(compiled.ok, table));
      expect('ok' in overRows).toBe('ok' in overTable);
      if ('ok' in overRows) expect(outcomeOf(() => evaluateQuery(query, rows))).toEqual(withoutFilters(overRows));
    }),
    propertyParameters(),
  );
}, 120_000);

test('for the ckan-2.12 target too (comparisons, or, in): evaluate(compile(q)) equals evaluateQuery(q)', () => {
  fc.assert(
    fc.property(tableWithQuery, ({ names, table, query }) => {
      // a field named `$…` must be written `$$…` in 2.12 filters; the compiler does not yet do so
      fc.pre(!names.some((name) => name.startsWith('$')));
      const compiled = outcomeOf(() => compile(query, { target: 'ckan-2.12' }));
      fc.pre('ok' in compiled);
      if (!('ok' in compiled)) return;
      const walked = outcomeOf(() => evaluateQuery(query, table));
      const answered = withoutFilters(outcomeOf(() => evaluate(compiled.ok, table, { ckan: '2.12' })));
      // an error is the same error, worded as 2.12 words it (`Unknown field: f`)
      if ('ok' in walked || 'ok' in answered) expect(walked).toEqual(answered);
      else expect(JSON.stringify(answered).includes('Unknown field') ? 'error' : answered).toEqual(JSON.stringify(answered).includes('Unknown field') ? 'error' : walked);
    }),
    propertyParameters(),
  );
}, 120_000);

/** The query without paging or projection, so its records are all of its matches with their `_id`. */
function unpaged(query: Query): Query {
  const { limit: _limit, offset: _offset, select: _select, ...rest } = query;
  return rest;
}

function withCondition(query: Query, condition: Condition): Query {
  const where = query.where
    ? { ...query.where, condition: { kind: 'and' as const, span: query.where.span, conditions: [query.where.condition, condition] } }
    : { kind: 'where' as const, span: query.span, condition };
  return { ...query, where };
}

function ids(result: SearchResult): number[] {
  return result.records.map((r) => r['_id'] as number);
}

/** The query as a CKAN 2.11 portal answers it: its request, and the rest locally (`f = null` is `f is null`). */
function run(query: Query, table: Table | readonly Row[]): SearchResult | undefined {
  const compiled = outcomeOf(() => compile(query));
  const result = 'ok' in compiled
    ? outcomeOf(() => evaluate(compiled.ok, table))
    : outcomeOf(() => evaluatePlan(plan(query, { target: 'ckan-2.11' }), table));
  return 'ok' in result ? result.ok : undefined;
}

test('adding a condition never adds records', () => {
  const arb = tableRowsArb.chain(({ names, rows }) => {
    const known = fc.constantFrom(...names, '_id');
    return fc.record({
      rows: fc.constant(rows),
      table: fc.constant(tableFromRows(rows, { id, alias })),
      query: queryOverTable(alias, names, { unknownFields: false, rows }),
      extra: conditionArb({ fields: known, values: poolScalar, parameters: false, compilable: true }),
    });
  });
  fc.assert(
    fc.property(arb, ({ table, query, extra }) => {
      // On an array column (`_text`…) CKAN 2.11 reads a list filter as array equality, not `in`
      // (docs/ckan-2.12-reference.md §1.7), so `a in (x) and a = y` is no narrowing of `a in (x)`
      // there: the compiler's merge of the two is not a 2.11 request for arrays.
      fc.pre(!table.fields.some((f) => f.type.startsWith('_')));
      const before = run(unpaged(query), table);
      const after = run(withCondition(unpaged(query), extra), table);
      fc.pre(before !== undefined && after !== undefined);
      if (before === undefined || after === undefined) return;
      const kept = new Set(ids(before));
      expect(ids(after).filter((n) => !kept.has(n))).toEqual([]);
      expect(after.total).toBeLessThanOrEqual(before.total ?? Infinity);
    }),
    propertyParameters(),
  );
}, 120_000);

test('f in (a, b) gives the union of f = a and f = b', () => {
  const arb = tableRowsArb.chain(({ rows }) => {
    const table = tableFromRows(rows, { id, alias });
    return fc.record({
      rows: fc.constant(rows),
      table: fc.constant(table),
      field: fc.constantFrom(...table.fields.map((f) => f.id)),
      a: poolScalar,
      b: poolScalar,
    });
  });
  const none = { start: 0, end: 0 };
  const name = (field: string) => ({ kind: 'field' as const, span: none, name: field });
  const query = (condition: Condition): Query => ({
    kind: 'query',
    span: none,
    from: { kind: 'from', span: none, resource: { kind: 'string', span: none, value: alias } },
    where: { kind: 'where', span: none, condition },
  });
  const sorted = (values: Iterable<number>) => [...values].sort((x, y) => x - y);
  fc.assert(
    fc.property(arb, ({ table, rows, field, a, b }) => {
      const both = query({ kind: 'in', span: none, field: name(field), values: [literalOf(a), literalOf(b)] });
      const eqA = query({ kind: 'eq', span: none, field: name(field), value: literalOf(a) });
      const eqB = query({ kind: 'eq', span: none, field: name(field), value: literalOf(b) });
      for (const source of [table, rows]) {
        const [inBoth, onA, onB] = [run(both, source), run(eqA, source), run(eqB, source)];
        // `f = null` compiles to no request (it means `f is null`): nothing to compare
        if (inBoth === undefined || onA === undefined || onB === undefined) continue;
        const union = sorted(new Set([...ids(onA), ...ids(onB)]));
        expect(ids(inBoth)).toEqual(union);
        expect(ids(evaluateQuery(both, source))).toEqual(union);
      }
    }),
    propertyParameters(),
  );
}, 120_000);

/**
 * Rows past one search chunk (16 384 rows) with a deterministic mix of pool
 * cells, so that text search and filters cross chunk boundaries and the
 * heap-based top-k page meets many ties. `ascii` keeps to ASCII cells (the
 * evaluator's fast lower-casing path).
 */
function bigRows(count: number, ascii: boolean): Row[] {
  const cells = cellPool.filter((v) => !ascii || typeof v !== 'string' || /^[\x20-\x7e]*$/.test(v));
  let seed = ascii ? 7 : 11;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
  return Array.from({ length: count }, () => {
    const row: Record<string, (typeof cells)[number]> = {};
    for (const name of ['a', 'b', 'school year']) {
      const pick = next() % (cells.length + 2);
      if (pick < cells.length) row[name] = cells[pick]!; // else the key is missing
    }
    return row;
  });
}

test('on large tables too, evaluateQuery(q, t) equals evaluate(compile(q), t)', () => {
  const big = [true, false].map((ascii) => {
    const rows = bigRows(40_000, ascii);
    return { rows, table: tableFromRows(rows, { id, alias }) };
  });
  const arb = fc.record({
    which: fc.constantFrom(0, 1),
    query: queryOverTable(alias, ['a', 'b', 'school year'], { unknownFields: false, rows: big[0]!.rows.slice(0, 200) }),
  });
  fc.assert(
    fc.property(arb, ({ which, query }) => {
      const { table } = big[which]!;
      const compiled = outcomeOf(() => compile(query));
      fc.pre('ok' in compiled);
      if (!('ok' in compiled)) return;
      expect(outcomeOf(() => evaluateQuery(query, table))).toEqual(withoutFilters(outcomeOf(() => evaluate(compiled.ok, table))));
    }),
    propertyParameters(Math.max(20, Math.floor(propertyRuns / 40))),
  );
}, 120_000);
