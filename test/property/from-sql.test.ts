/**
 * The sql target's text read back (`fromSql`, docs/beyond-the-request.md):
 * 1. for generated queries of the whole grammar, `fromSql(sql(q))` equals
 *    `q` normalized as the SQL text cannot keep it (spans aside), and
 *    writing it again gives the same SQL;
 * 2. over generated tables, the query read back keeps the same records as
 *    the query (the reference walker `evaluateQuery`);
 * 3. the same for CKAN 2.12's filter trees read back by `fromRequest`, whose
 *    query compiles to a request with the records of the first;
 * 4. for generated queries that compute (expressions in select, where and
 *    order by; groups with aggregates in expressions and having), the query
 *    read back writes the same SQL (so PostgreSQL answers both alike) and
 *    keeps the same records on the memory engine.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { Condition, Field, Literal, Query, Search, Value } from '../../src/ast.js';
import { plainSelect } from '../../src/ast.js';
import { compile, plan } from '../../src/compile/compile.js';
import { fromRequest } from '../../src/compile/from-request.js';
import type { SearchRequest, Table } from '../../src/datastore/types.js';
import { fromSql } from '../../src/compile/from-sql.js';
import { hasPrefixWord, searchWords, tsQueryText } from '../../src/compile/search-text.js';
import { canonicalText } from '../../src/datastore/values.js';
import { evaluate } from '../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { tableFromRows } from '../../src/engine/memory/load.js';
import { QueryError } from '../../src/errors.js';
import { expressionQueryArb, propertyParameters, propertyRuns, queryArb, queryOverTable, tableRowsArb } from '../helpers/arbitraries.js';
import { typedTable } from '../engine/sql/engines.js';
import { outcomeOf } from '../helpers/outcome.js';
import { stripSpans } from '../helpers/spans.js';

const span = { start: 0, end: 0 };
const field = (name: string) => ({ kind: 'field' as const, span, name });

/** The SQL text of a query; undefined when the sql target refuses it (a NUL in a name or value). */
function sqlOf(query: Query): string | undefined {
  try {
    return compile(query, { target: 'sql' }).sql;
  } catch (error) {
    if (error instanceof QueryError && error.code === 'NUL_IN_SQL') return undefined;
    throw error;
  }
}

// ---------------------------------------------------------------- the normalization fromSql's notes state

/** A literal as untyped SQL text read back: the canonical text of a number or boolean is that value. */
function literal(value: Value): Literal {
  if (value.kind === 'null' || value.kind === 'param') return { kind: 'null', span };
  const text = canonicalText(value.value)!;
  if (text === 'true' || text === 'false') return { kind: 'boolean', span, value: text === 'true' };
  const n = Number(text);
  if (/^-?\d/.test(text) && Number.isFinite(n) && String(n) === text) return { kind: 'number', span, value: n };
  return { kind: 'string', span, value: text };
}

const isNull = (name: string): Condition => ({ kind: 'is-null', span, field: field(name) });

function condition(c: Condition): Condition {
  switch (c.kind) {
    case 'eq':
      return c.value.kind === 'null' ? isNull(c.field.name) : { ...c, value: literal(c.value) };
    case 'compare':
      if (c.value.kind !== 'null') return { ...c, value: literal(c.value) };
      return c.op === 'ne'
        ? { kind: 'not', span, condition: isNull(c.field.name) }
        : { kind: 'compare', span, op: 'lt', field: field('_id'), value: { kind: 'null', span } };
    case 'in': {
      const values = c.values.filter((v) => v.kind !== 'null').map(literal);
      if (values.length === c.values.length) return { ...c, values };
      return { ...c, values: [...values, { kind: 'null', span }] };
    }
    case 'between':
      return { ...c, low: literal(c.low), high: literal(c.high) };
    case 'like':
    case 'is-null':
    case 'comparison':
      return c;
    case 'not':
      return { ...c, condition: condition(c.condition) };
    case 'and':
    case 'or': {
      const conditions = c.conditions.map(condition);
      const [first, second] = conditions;
      // `(f IS NULL OR f IN (…))` is how an `in` list with null is written, so it reads back as one.
      if (c.kind === 'or' && conditions.length === 2 && first!.kind === 'is-null' && second!.kind === 'in' && second!.values.every((v) => v.kind !== 'null')) {
        if (second!.field.name === first!.field.name) return { kind: 'in', span, field: first!.field, values: [...second!.values, { kind: 'null', span }] };
      }
      return { ...c, conditions };
    }
  }
}

function searchText(text: string): string {
  return hasPrefixWord(text) ? searchWords(tsQueryText(text))! : text;
}

function search(s: Search): Search | undefined {
  const language = s.language === undefined || s.language.value === 'english' ? {} : { language: s.language };
  if (s.fields !== undefined) {
    return { kind: 'search', span, fields: s.fields.map((f) => ({ ...f, text: { kind: 'string', span, value: searchText((f.text as { value: string }).value) } })), ...language };
  }
  const text = (s.text as { value: string }).value;
  if (/^\s*$/.test(text)) return undefined;
  return { kind: 'search', span, text: { kind: 'string', span, value: searchText(text) }, ...language };
}

function normalized(q: Query): Query {
  const out: { -readonly [K in keyof Query]: Query[K] } = { kind: 'query', span, from: q.from };
  if (q.where !== undefined) out.where = { ...q.where, condition: condition(q.where.condition) };
  const s = q.search === undefined ? undefined : search(q.search);
  if (s !== undefined) out.search = s;
  if (q.select !== undefined) {
    const fields = [...new Set(q.select.items.map((item) => (item.value as Field).name))].map(field);
    out.select = plainSelect(fields, q.select.span, q.select.distinct === true);
  }
  if (q.order !== undefined) out.order = q.order;
  const limit = Math.min(q.limit?.value.kind === 'number' ? q.limit.value.value : 100, 32_000);
  out.limit = { kind: 'limit', span, value: { kind: 'number', span, value: limit } };
  if (q.offset?.value.kind === 'number' && q.offset.value.value > 0) out.offset = q.offset;
  return out;
}

test('fromSql(sql(q)) is q as SQL keeps it, and writes the same SQL again', () => {
  let read = 0;
  fc.assert(
    fc.property(queryArb({ whole: true, parameters: false }), (query) => {
      const sql = sqlOf(query);
      fc.pre(sql !== undefined);
      const back = fromSql(sql!);
      read++;
      expect(stripSpans(back)).toEqual(stripSpans(normalized(query)));
      expect(compile(back, { target: 'sql' }).sql).toBe(sql);
    }),
    propertyParameters(Math.max(200, Math.floor(propertyRuns / 2))),
  );
  expect(read).toBeGreaterThan(20);
}, 120_000);

/**
 * Whether the query compares a field of whole numbers with a value that is
 * not one: the language reads the number `2.5` there but refuses the text
 * `"2.5"`, and SQL text cannot say which it was (fromSql's notes).
 */
function decimalOnInteger(query: Query, table: Table): boolean {
  const integer = new Set(table.fields.filter((f) => f.type === 'int' || f.type === 'int4' || f.type === 'int8').map((f) => f.id));
  const decimal = (v: Value): boolean => {
    const text = v.kind === 'string' || v.kind === 'number' ? String(v.value) : '';
    return text.trim() !== '' && Number.isFinite(Number(text)) && !Number.isInteger(Number(text));
  };
  const visit = (c: Condition): boolean => {
    switch (c.kind) {
      case 'compare':
        return integer.has(c.field.name) && decimal(c.value);
      case 'between':
        return integer.has(c.field.name) && (decimal(c.low) || decimal(c.high));
      case 'not':
        return visit(c.condition);
      case 'and':
      case 'or':
        return c.conditions.some(visit);
      default:
        return false;
    }
  };
  return query.where !== undefined && visit(query.where.condition);
}

test('the query read back keeps the records the query keeps', () => {
  const arb = tableRowsArb.chain(({ names, rows }) =>
    queryOverTable('t', names, { rows, wholeWhere: true }).map((query) => ({ table: tableFromRows(rows, { alias: 't' }), query })),
  );
  fc.assert(
    fc.property(arb, ({ table, query }) => {
      const sql = sqlOf(query);
      fc.pre(sql !== undefined && !decimalOnInteger(query, table));
      const reference = outcomeOf(() => evaluateQuery(query, table).records);
      expect(outcomeOf(() => evaluateQuery(fromSql(sql!), table).records)).toEqual(reference);
    }),
    propertyParameters(Math.max(100, Math.floor(propertyRuns / 5))),
  );
}, 120_000);

test('a CKAN 2.12 request reads back (fromRequest) into a query with the same records, which compiles to a request with them too', () => {
  const arb = tableRowsArb.chain(({ names, rows }) =>
    queryOverTable('t', names, { rows, wholeWhere: true }).map((query) => ({ table: tableFromRows(rows, { alias: 't' }), query })),
  );
  let read = 0;
  fc.assert(
    fc.property(arb, ({ table, query }) => {
      // a query the target refuses (SEARCH_READ_AS_FIELDS) has no request to read back
      const outcome = outcomeOf(() => plan(query, { target: 'ckan-2.12' }));
      fc.pre('ok' in outcome);
      if (!('ok' in outcome)) return;
      const planned = outcome.ok;
      fc.pre(planned.residual === undefined);
      const request = planned.request as SearchRequest;
      const back = fromRequest(request, { ckan: '2.12' });
      read++;
      const reference = outcomeOf(() => evaluateQuery(query, table).records);
      expect(outcomeOf(() => evaluateQuery(back, table).records)).toEqual(reference);
      // fromRequest reads 2.12's tree (nested $or flattened, operators split): the request may be shaped anew, with the same records.
      const again = compile(back, { target: 'ckan-2.12' });
      const byRequest = outcomeOf(() => evaluate(request, table, { ckan: '2.12' }).records);
      expect(outcomeOf(() => evaluate(again, table, { ckan: '2.12' }).records)).toEqual(byRequest);
    }),
    propertyParameters(Math.max(100, Math.floor(propertyRuns / 5))),
  );
  expect(read).toBeGreaterThan(10);
}, 120_000);

/** A table of every type an expression reads: integers, decimals, floats, text, dates, with nulls. */
const computing = typedTable(
  't',
  [['i', 'int4'], ['n', 'numeric'], ['f', 'float8'], ['s', 'text'], ['d', 'date']],
  [
    { i: 7, n: 1.5, f: 0.5, s: 'abc', d: '2021-03-04' },
    { i: -3, n: -2.25, f: -1.25, s: ' Äb ', d: '2022-12-31' },
    { i: 0, n: 0, f: 3, s: '', d: null },
    { i: null, n: '12345678901234567890.123', f: null, s: null, d: '2020-02-29' },
    { i: 2, n: 0.1, f: 1e-7, s: 'x y', d: '2023-01-01' },
    { i: 7, n: 3, f: 2.5, s: 'abc', d: '2021-03-04' },
  ],
);

test("a statement that computes reads back (fromSql) into a query that writes the same SQL and keeps the same records", () => {
  let read = 0;
  fc.assert(
    // number fields more often than text and dates, so that more expressions have values to compare
    fc.property(expressionQueryArb('t', ['i', 'n', 'f', 'i', 'n', 'f', 's', 'd']), (query) => {
      const written = outcomeOf(() => compile(query, { target: 'sql' }).sql);
      fc.pre('ok' in written);
      const sql = (written as { ok: string }).ok;
      const back = fromSql(sql);
      read++;
      expect(compile(back, { target: 'sql' }).sql).toBe(sql);
      expect(outcomeOf(() => evaluateQuery(back, computing).records)).toEqual(outcomeOf(() => evaluateQuery(query, computing).records));
    }),
    propertyParameters(Math.max(200, Math.floor(propertyRuns / 2))),
  );
  expect(read).toBeGreaterThan(50);
}, 120_000);
