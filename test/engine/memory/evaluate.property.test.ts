/**
 * `evaluate` against a naive reference written here from semantics.md alone:
 * every record tested against every filter, one sort, one slice. The
 * reference shares no code with the evaluator (not even values.ts).
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import type { FieldInfo, JsonValue, Row, Scalar, SearchRequest, Table } from '../../../src/datastore/types.js';
import type { FilterNode } from '../../../src/datastore/filters.js';
import { conditionOf, scanFor } from '../../../src/engine/memory/predicate.js';
import { propertyParameters, scaledRuns } from '../../helpers/arbitraries.js';

// ---------------------------------------------------------------------------
// The reference

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

const normalize = (s: string): string => s.normalize('NFKC').toLowerCase();

function rank(v: unknown): number {
  if (v === null || v === undefined) return 4;
  if (typeof v === 'boolean') return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  return 3;
}

function byCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

function compare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  if (ra === 1) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (ra === 4) return 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    // PostgreSQL's array order: element by element, then the shorter first
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compare(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  return byCodePoints(text(a) as string, text(b) as string);
}

const DECIMAL_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A number field of a typed table: its numbers and its number text (`"0"`) by value, as PostgreSQL orders the column,
 * anything else where `compare` puts it beside a number (the values here are small: a double holds each exactly).
 */
function compareNumberField(a: unknown, b: unknown): number {
  const value = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && DECIMAL_TEXT.test(v) ? Number(v) : undefined);
  const x = value(a);
  const y = value(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  return compare(x === undefined ? a : 0, y === undefined ? b : 0);
}

interface Request {
  readonly filters?: Record<string, Scalar | Scalar[]>;
  readonly q?: string;
  readonly sort?: readonly { field: string; desc: boolean }[];
  readonly fields?: readonly string[];
  readonly limit?: number;
  readonly offset?: number;
}

/**
 * CKAN reads a `q` text as JSON first (its `unicode_or_json_validator`): `{}` is a per-field search
 * of no fields, so no condition. The arbitraries make no other object text (`q` is at most 2 characters).
 */
function isEmptyObjectText(q: string): boolean {
  if (!q.trimStart().startsWith('{')) return false;
  try {
    const parsed: unknown = JSON.parse(q);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
    if (Object.keys(parsed).length > 0) throw new Error(`the reference reads no per-field search: ${q}`);
    return true;
  } catch (error) {
    if (error instanceof SyntaxError) return false;
    throw error;
  }
}

function reference(rows: readonly Row[], fieldNames: readonly string[], request: Request, numberFields: ReadonlySet<string> = new Set()): { total: number; records: Row[] } {
  const get = (row: Row, name: string, i: number): unknown => {
    const v = Object.hasOwn(row, name) ? row[name] : undefined;
    return name === '_id' && (v === undefined || v === null) ? i + 1 : v;
  };
  const q = request.q === undefined || isEmptyObjectText(request.q) ? '' : normalize(request.q).replace(/\s+/g, ' ').trim();
  const kept: { row: Row; i: number }[] = [];
  rows.forEach((row, i) => {
    for (const [name, wanted] of Object.entries(request.filters ?? {})) {
      const list = Array.isArray(wanted) ? wanted : [wanted];
      const have = text(get(row, name, i));
      if (!list.some((w) => text(w) === have)) return;
    }
    if (q !== '') {
      const found = fieldNames.some((name) => {
        if (name === '_id') return false;
        const t = text(get(row, name, i));
        return t !== null && normalize(t).includes(q);
      });
      if (!found) return;
    }
    kept.push({ row, i });
  });
  kept.sort((x, y) => {
    for (const key of request.sort ?? []) {
      const c = (numberFields.has(key.field) ? compareNumberField : compare)(get(x.row, key.field, x.i), get(y.row, key.field, y.i));
      if (c !== 0) return key.desc ? -c : c;
    }
    return x.i - y.i;
  });
  const offset = request.offset ?? 0;
  const limit = request.limit ?? 100;
  const out = request.fields ?? fieldNames;
  const records = kept.slice(offset, offset + limit).map(({ row, i }) => {
    const record: Record<string, unknown> = {};
    for (const name of out) record[name] = get(row, name, i) ?? null;
    return record as Row;
  });
  return { total: kept.length, records };
}

// ---------------------------------------------------------------------------
// Generators: few names and values, so filters and q hit often

const NAMES = ['a', 'b', 'school year', 'Ü', 'constructor'] as const;
const TRICKY: readonly JsonValue[] = [
  2020, '2020', 2.5, '2.50', 0, -0, '0', true, false, 'true', 'null', 'Active', 'active', 'ACTIVE', 'ﬁle', 'Ｆile', 'é',
  'e\u0301', '😀', '～', 'a  b', 'a b', ' ', '', 'Straße', 'ß', 'Σ', 'x\ny',
];
const scalar: fc.Arbitrary<Scalar> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...(TRICKY as Scalar[])) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 4, unit: fc.constantFrom('a', 'B', 'é', 'ﬁ', ' ', '1', '😀') }) },
);
const value: fc.Arbitrary<JsonValue | undefined> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue> },
);

const rowArb: fc.Arbitrary<Row> = fc
  .tuple(...NAMES.map(() => value))
  .map((values) => {
    const row: Record<string, JsonValue> = {};
    values.forEach((v, k) => {
      if (v !== undefined) Object.defineProperty(row, NAMES[k] as string, { value: v, enumerable: true, writable: true, configurable: true });
    });
    return row as Row;
  });

const requestArb: fc.Arbitrary<Request> = fc.record(
  {
    filters: fc.dictionary(fc.constantFrom(...NAMES, '_id'), fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })), { maxKeys: 2 }),
    q: fc.oneof(fc.constantFrom('a', 'A', 'é', 'ﬁ', 'fi', '2', '20', 'true', 'null', 'a b', '  A  B ', '😀', 'ss', 'σ', '"', ','), fc.string({ maxLength: 3 })),
    sort: fc.array(fc.record({ field: fc.constantFrom(...NAMES, '_id'), desc: fc.boolean() }), { maxLength: 2 }),
    fields: fc.uniqueArray(fc.constantFrom(...NAMES, '_id'), { minLength: 1, maxLength: 3 }),
    limit: fc.integer({ min: 0, max: 8 }),
    offset: fc.integer({ min: 0, max: 8 }),
  },
  { requiredKeys: [] },
);

function toWire(request: Request): Record<string, unknown> {
  const wire: Record<string, unknown> = { resource_id: 'generated' };
  if (request.filters !== undefined) wire.filters = request.filters;
  if (request.q !== undefined) wire.q = request.q;
  if (request.sort !== undefined) wire.sort = request.sort.map((k) => `"${k.field.replaceAll('"', '""')}" ${k.desc ? 'desc' : 'asc'}`);
  if (request.fields !== undefined) wire.fields = request.fields;
  if (request.limit !== undefined) wire.limit = request.limit;
  if (request.offset !== undefined) wire.offset = request.offset;
  return wire;
}

const FIELDS: readonly FieldInfo[] = [{ id: '_id', type: 'int' }, ...NAMES.map((id) => ({ id, type: 'json' as const }))];

describe('evaluate equals the naive reference', () => {
  test('over a Table', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 24 }), requestArb, (rows, request) => {
        const table: Table = { id: 'generated', aliases: [], fields: FIELDS, rows: rows.map((r, i) => ({ _id: i + 1, ...r })) };
        const expected = reference(table.rows, FIELDS.map((f) => f.id), request);
        const result = evaluate(toWire(request) as unknown as SearchRequest, table);
        expect(result.total).toBe(expected.total);
        expect(result.records).toEqual(expected.records);
      }),
      propertyParameters(scaledRuns(3000)),
    );
  });

  test('over plain rows (fields inferred, _id from the position)', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 24 }), requestArb, (rows, request) => {
        // the inferred field list: _id, then every key in order of first appearance
        const seen: string[] = ['_id'];
        for (const row of rows) for (const key of Object.keys(row)) if (!seen.includes(key)) seen.push(key);
        const named = [...(request.fields ?? []), ...Object.keys(request.filters ?? {}), ...(request.sort ?? []).map((s) => s.field)];
        if (named.some((name) => !seen.includes(name))) {
          // a name no record has is a Validation Error, as on the server
          expect(() => evaluate(toWire(request) as unknown as SearchRequest, rows)).toThrow(/invalid value/);
          return;
        }
        const result = evaluate(toWire(request) as unknown as SearchRequest, rows);
        const names = result.fields.map((f) => f.id);
        expect(names).toEqual(request.fields === undefined ? seen : request.fields);
        const expected = reference(rows, seen, request);
        expect(result.total).toBe(expected.total);
        expect(result.records).toEqual(expected.records);
      }),
      propertyParameters(scaledRuns(2000)),
    );
  });

  test('over plain rows with declared fields (other keys are no fields), as over a table with those fields', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 24 }), fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: NAMES.length }), requestArb, (rows, declared, request) => {
        const names = ['_id', ...declared];
        const named = [...(request.fields ?? []), ...Object.keys(request.filters ?? {}), ...(request.sort ?? []).map((s) => s.field)];
        const fields = declared.map((id) => ({ id, type: 'json' }));
        if (named.some((name) => !names.includes(name))) {
          expect(() => evaluate(toWire(request) as unknown as SearchRequest, rows, { fields })).toThrow(/invalid value/);
          return;
        }
        const result = evaluate(toWire(request) as unknown as SearchRequest, rows, { fields });
        expect(result.fields.map((f) => f.id)).toEqual(request.fields ?? names);
        const expected = reference(rows, names, request);
        expect(result.total).toBe(expected.total);
        expect(result.records).toEqual(expected.records);
        const table: Table = { id: 'generated', aliases: [], fields: [{ id: '_id', type: 'int' }, ...declared.map((id) => ({ id, type: 'json' as const }))], rows };
        const fromTable = evaluate(toWire(request) as unknown as SearchRequest, table);
        expect([result.fields, result.records]).toEqual([fromTable.fields, fromTable.records]);
      }),
      propertyParameters(scaledRuns(2000)),
    );
  });

  // Declared types that the values do not all have: the first request's row scan compares
  // values of the declared kind with `===` and must fall back to canonical text for the rest.
  const TYPED: readonly FieldInfo[] = [
    { id: '_id', type: 'int' },
    { id: 'a', type: 'int' },
    { id: 'b', type: 'text' },
    { id: 'school year', type: 'bool' },
    { id: 'Ü', type: 'numeric' },
    { id: 'constructor', type: 'timestamp' },
  ];

  test('over a typed Table, the same request three times (row scan, then columns, then indexes)', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 24 }), requestArb, (rows, request) => {
        const table: Table = { id: 'generated', aliases: [], fields: TYPED, rows: rows.map((r, i) => ({ _id: i + 1, ...r })) };
        const expected = reference(table.rows, TYPED.map((f) => f.id), request, new Set(['a', 'Ü']));
        for (let run = 0; run < 3; run++) {
          const result = evaluate(toWire(request) as unknown as SearchRequest, table);
          expect(result.total).toBe(expected.total);
          expect(result.records).toEqual(expected.records);
        }
      }),
      propertyParameters(scaledRuns(2000)),
    );
  });

  test('over a loaded table (text columns encoded by the loader), the same request three times', () => {
    // values of one kind per field, so the loader can encode the text fields
    const textArb = fc.constantFrom('Active', 'active', 'ﬁle', 'Ｆile', 'é', 'e\u0301', 'Straße', 'x\ny', '', ' ', '2020', 'true');
    // every key in every row (null for none): the table then has the fields the requests name
    const loadedRow = fc.record({
      a: fc.oneof(textArb, fc.constant(null)),
      b: fc.oneof(textArb, fc.constant(null)),
      n: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(null)),
    });
    const loadedRequest: fc.Arbitrary<Request> = fc.record(
      {
        filters: fc.dictionary(fc.constantFrom('a', 'b', 'n'), fc.oneof(scalar, textArb, fc.array(fc.oneof(scalar, textArb), { maxLength: 3 })), { maxKeys: 2 }),
        q: fc.oneof(fc.constantFrom('a', 'fi', 'file', 'é', 'ss', '2', 'tru', ' '), fc.string({ maxLength: 2 })),
        sort: fc.array(fc.record({ field: fc.constantFrom('a', 'b', 'n', '_id'), desc: fc.boolean() }), { maxLength: 2 }),
        limit: fc.integer({ min: 0, max: 8 }),
        offset: fc.integer({ min: 0, max: 4 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(loadedRow, { minLength: 1, maxLength: 40 }), loadedRequest, (rows, request) => {
        const table = tableFromRows(rows as Row[], { alias: 'loaded' });
        const expected = reference(table.rows, table.fields.map((f) => f.id), request);
        for (let run = 0; run < 3; run++) {
          const result = evaluate(toWire(request) as unknown as SearchRequest, table);
          expect(result.total).toBe(expected.total);
          expect(result.records).toEqual(expected.records);
        }
      }),
      propertyParameters(scaledRuns(1500)),
    );
  });

  test('over one table many times (cached columns and search text stay right)', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 60 }), fc.array(requestArb, { minLength: 2, maxLength: 8 }), (rows, requests) => {
        const table: Table = { id: 'generated', aliases: [], fields: FIELDS, rows: rows.map((r, i) => ({ _id: i + 1, ...r })) };
        for (const request of requests) {
          const expected = reference(table.rows, FIELDS.map((f) => f.id), request);
          const result = evaluate(toWire(request) as unknown as SearchRequest, table);
          expect(result.total).toBe(expected.total);
          expect(result.records).toEqual(expected.records);
        }
      }),
      propertyParameters(scaledRuns(300)),
    );
  });
});

// ---------------------------------------------------------------------------
// Filter trees (and/or of =, in, <, <=, >, >=) against a naive reading of
// docs/beyond-the-request.md: an int field compares numerically, a text field by
// code point, null or missing is unknown (false); = and in by canonical text.

describe('filter trees equal a naive filter', () => {
  const TREE_FIELDS: readonly FieldInfo[] = [
    { id: '_id', type: 'int' },
    { id: 'n', type: 'int' },
    { id: 's', type: 'text' },
  ];
  const cell = fc.oneof(fc.constant(null), fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'B', 'é', '😀', 'ab', '2'));
  const treeRows = fc.array(
    fc.record({ n: fc.oneof(fc.constant(null), fc.integer({ min: -3, max: 3 })), s: fc.oneof(fc.constant(null), fc.constantFrom('a', 'B', 'é', '😀', 'ab', '')) }, { requiredKeys: [] }),
    { maxLength: 30 },
  );
  type Node = FilterNode;
  const leaf: fc.Arbitrary<Node> = fc.oneof(
    fc.record({ op: fc.constant('eq' as const), field: fc.constantFrom('n', 's', '_id'), value: cell }),
    fc.record({ op: fc.constant('in' as const), field: fc.constantFrom('n', 's'), values: fc.array(cell, { maxLength: 3 }) }),
    fc.record({ op: fc.constantFrom('gt' as const, 'gte' as const, 'lt' as const, 'lte' as const), field: fc.constant('n'), value: fc.oneof(fc.constant(null), fc.integer({ min: -3, max: 3 })) }),
    fc.record({ op: fc.constantFrom('gt' as const, 'gte' as const, 'lt' as const, 'lte' as const), field: fc.constant('s'), value: fc.constantFrom('a', 'B', 'é', '😀', '') }),
  );
  const tree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.record({ op: fc.constantFrom('and' as const, 'or' as const), of: fc.array(tie('node'), { maxLength: 3 }) })),
  })).node;

  function holds(node: Node, row: Row, i: number): boolean {
    const get = (f: string): unknown => (f === '_id' ? i + 1 : Object.hasOwn(row, f) ? row[f] : null);
    switch (node.op) {
      case 'and':
        return node.of.every((c) => holds(c, row, i));
      case 'or':
        return node.of.some((c) => holds(c, row, i));
      case 'eq':
        return text(get(node.field)) === text(node.value);
      case 'in':
        return node.values.some((v) => text(get(node.field)) === text(v));
      default: {
        const x = get(node.field);
        if (x === null || x === undefined || node.value === null) return false;
        const c = node.field === 's' ? byCodePoints(x as string, node.value as string) : (x as number) - (node.value as number);
        return { gt: c > 0, gte: c >= 0, lt: c < 0, lte: c <= 0 }[node.op];
      }
    }
  }

  test('the generated scan keeps exactly the rows the naive filter keeps', () => {
    const fieldById = new Map(TREE_FIELDS.map((f) => [f.id, f]));
    fc.assert(
      fc.property(treeRows, tree, (rows, node) => {
        const got = [...scanFor(conditionOf(node, fieldById))(rows as Row[], null).rows];
        const expected = rows.flatMap((row, i) => (holds(node, row as Row, i) ? [i] : []));
        expect(got).toEqual(expected);
      }),
      propertyParameters(scaledRuns(1500)),
    );
  });
});

test('a q text that is JSON of an empty object is no condition, as CKAN reads it (the property found it: seed -1037810280)', () => {
  const table = tableFromRows([{ a: null, b: 'x' }] as Row[], { alias: 'loaded' });
  for (const q of ['{}', ' {} ']) expect(evaluate({ resource_id: 'loaded', q } as SearchRequest, table).total).toBe(1);
  // a text that is no JSON object is searched for
  expect(evaluate({ resource_id: 'loaded', q: '{' } as SearchRequest, table).total).toBe(0);
});
