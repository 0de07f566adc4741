/**
 * The filter tree's meaning (docs/beyond-the-request.md): equality by
 * canonical text, comparisons by the field's type with SQL's unknown for
 * null, and/or; the generated scan and the closures (without code
 * generation) give the same rows.
 */
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { FilterNode } from '../../../src/datastore/filters.js';
import type { FieldInfo, JsonValue, Row } from '../../../src/datastore/types.js';
import { DatastoreError } from '../../../src/errors.js';
import { bySelectivity, compareTest, conditionOf, equalsTest, scanFor } from '../../../src/engine/memory/predicate.js';
import { repoRoot } from '../../cli/run-ckql.js';
import { runNodeProgram } from '../../helpers/node-program.js';

const fields: FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'year', type: 'int4' },
  { id: 'score', type: 'numeric' },
  { id: 'title', type: 'text' },
  { id: 'on', type: 'date' },
  { id: 'at', type: 'timestamp' },
  { id: 'ok', type: 'bool' },
  { id: 'meta', type: 'json' },
  { id: 'constructor', type: 'text' },
];
const fieldById = new Map(fields.map((f) => [f.id, f]));

const rows: Row[] = [
  { year: 2019, score: 1.5, title: 'Algebra', on: '2020-01-01', at: '2020-01-01T10:00:00', ok: true },
  { year: 2020, score: '2.5', title: 'algebra', on: '2020-01-02', at: '2020-01-01T00:00:00', ok: false, constructor: 'c' },
  { year: '2021', score: null, title: 'Ärger', on: null, ok: null },
  { title: 'Zebra', at: '2021-06-30' },
];

function matching(node: FilterNode, source: readonly Row[] = rows): number[] {
  return [...scanFor(conditionOf(node, fieldById))(source, null).rows].map((i) => i + 1);
}

function failure(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    if (error instanceof DatastoreError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error('expected a DatastoreError');
}

describe('equality by canonical text', () => {
  test.each<[JsonValue[], JsonValue | undefined, boolean]>([
    [[2020], '2020', true],
    [['2020'], 2020, true],
    [[2020], 2020.5, false],
    [['1e21'], 1e21, false], // String(1e21) is "1e+21"
    [[null], undefined, true],
    [[null], 'null', false],
    [['Active'], 'active', false],
    [[true], 'true', true],
    [[[1, 'a']], [1, 'a'], true],
    [['NaN'], Number.NaN, true],
    [[0], -0, true],
    [[], null, false],
    [['a', 'b', null], undefined, true],
  ])('%j wants %j: %s', (values, value, expected) => {
    expect(equalsTest(values)(value)).toBe(expected);
  });
});

describe('comparisons by the field type', () => {
  test.each<[FilterNode, number[]]>([
    [{ op: 'gte', field: 'year', value: 2020 }, [2, 3]],
    [{ op: 'gt', field: 'year', value: ' 2019 ' }, [2, 3]],
    [{ op: 'lt', field: 'score', value: '2' }, [1]],
    [{ op: 'lte', field: 'score', value: 2.5 }, [1, 2]],
    // text by code point: upper case before lower case, Ä after z
    [{ op: 'gt', field: 'title', value: 'Zebra' }, [2, 3]],
    [{ op: 'lt', field: 'title', value: 'B' }, [1]],
    // a date alone is midnight
    [{ op: 'gte', field: 'at', value: '2020-01-01' }, [1, 2, 4]],
    [{ op: 'gt', field: 'at', value: '2020-01-01' }, [1, 4]],
    [{ op: 'lte', field: 'on', value: '2020-01-01T23:59:59' }, [1]],
    [{ op: 'gt', field: 'ok', value: 'f' }, [1]],
    [{ op: 'lt', field: 'ok', value: true }, [2]],
    [{ op: 'gt', field: '_id', value: '2' }, [3, 4]],
    // null on either side is unknown: no record
    [{ op: 'gt', field: 'year', value: null }, []],
  ])('%j', (node, expected) => {
    expect(matching(node)).toEqual(expected);
  });

  test.each<[FilterNode, string]>([
    [{ op: 'gt', field: 'year', value: 'abc' }, 'invalid value "abc" for field "year": it is not a valid int4'],
    [{ op: 'gt', field: 'year', value: '20.5' }, 'invalid value "20.5" for field "year": it is not a valid int4'],
    [{ op: 'gt', field: 'score', value: true }, 'invalid value true for field "score": it is not a valid numeric'],
    [{ op: 'lt', field: 'on', value: '2021-02-30' }, 'invalid value "2021-02-30" for field "on": it is not a valid date'],
    [{ op: 'gt', field: 'ok', value: 'o' }, 'invalid value "o" for field "ok": it is not a valid bool'],
    [{ op: 'gt', field: 'meta', value: 1 }, 'invalid value 1 for field "meta": a json field has no order'],
  ])('%j is a Validation Error naming the field and value', (node, message) => {
    expect(failure(() => conditionOf(node, fieldById))).toEqual({ status: 409, body: { __type: 'Validation Error', filters: [message] } });
  });

  test('a value of another type in the row is unknown, not an error', () => {
    expect(compareTest({ id: 'year', type: 'int' }, 'gt', 1)('abc')).toBe(false);
    expect(compareTest({ id: 'year', type: 'int' }, 'gt', 1)('5')).toBe(true);
  });
});

describe('and / or', () => {
  test.each<[FilterNode, number[]]>([
    [{ op: 'and', of: [] }, [1, 2, 3, 4]],
    [{ op: 'or', of: [] }, []],
    [{ op: 'in', field: 'title', values: [] }, []],
    [{ op: 'or', of: [{ op: 'eq', field: 'year', value: 2019 }, { op: 'eq', field: 'title', value: 'Zebra' }] }, [1, 4]],
    [
      { op: 'and', of: [{ op: 'gte', field: 'year', value: 2019 }, { op: 'or', of: [{ op: 'eq', field: 'ok', value: false }, { op: 'eq', field: 'ok', value: null }] }] },
      [2, 3],
    ],
    [{ op: 'eq', field: 'constructor', value: null }, [1, 3, 4]],
  ])('%j', (node, expected) => {
    expect(matching(node)).toEqual(expected);
  });

  test('unknown fields: 2.11 names the first, 2.12 lists them all', () => {
    const node: FilterNode = { op: 'or', of: [{ op: 'eq', field: 'nope', value: 1 }, { op: 'eq', field: 'gone', value: 1 }] };
    expect(failure(() => conditionOf(node, fieldById))).toEqual({ status: 409, body: { __type: 'Validation Error', filters: ['invalid value "nope"'] } });
    expect(failure(() => conditionOf(node, fieldById, '2.12'))).toEqual({
      status: 409,
      body: { __type: 'Validation Error', filters: ['Unknown field: nope', 'Unknown field: gone'] },
    });
  });

  test('candidates narrow the scan; lists grow past their first size', () => {
    const many: Row[] = Array.from({ length: 5000 }, (_, i) => ({ year: i % 3 }));
    const scan = scanFor(conditionOf({ op: 'eq', field: 'year', value: 0 }, fieldById));
    expect(scan(many, null).total).toBe(1667);
    expect([...scan(many, [0, 1, 2, 3, 4997, 4998]).rows]).toEqual([0, 3, 4998]);
    // only the first `keep` positions are kept; all are counted
    const page = scan(many, null, 2);
    expect([...page.rows]).toEqual([0, 3]);
    expect(page.total).toBe(1667);
  });
});

describe('without code generation', () => {
  test('the closures answer as the generated code does (node --disallow-code-generation-from-strings)', () => {
    const predicate = path.join(repoRoot, 'src/engine/memory/predicate.ts');
    const out = runNodeProgram(
      `import { conditionOf, scanFor } from ${JSON.stringify(predicate)};
const fields = new Map([['_id', { id: '_id', type: 'int' }], ['a', { id: 'a', type: 'int' }], ['constructor', { id: 'constructor', type: 'text' }]]);
const rows = [{ a: 1 }, { a: '2', constructor: 'x' }, { _id: 9, a: null }];
const tree = { op: 'or', of: [{ op: 'gte', field: 'a', value: 2 }, { op: 'eq', field: 'constructor', value: null }, { op: 'eq', field: '_id', value: 9 }] };
console.log(JSON.stringify([...scanFor(conditionOf(tree, fields))(rows, null).rows]));`,
      ['--disallow-code-generation-from-strings'],
    );
    expect(JSON.parse(out)).toEqual([0, 1, 2]);
    const fields2 = new Map<string, FieldInfo>([['_id', { id: '_id', type: 'int' }], ['a', { id: 'a', type: 'int' }], ['constructor', { id: 'constructor', type: 'text' }]]);
    const tree: FilterNode = { op: 'or', of: [{ op: 'gte', field: 'a', value: 2 }, { op: 'eq', field: 'constructor', value: null }, { op: 'eq', field: '_id', value: 9 }] };
    expect([...scanFor(conditionOf(tree, fields2))([{ a: 1 }, { a: '2', constructor: 'x' }, { _id: 9, a: null }], null).rows]).toEqual([0, 1, 2]);
  });
});

describe('the order of an and', () => {
  const sorted = (conditions: ReturnType<typeof conditionOf>[], source: readonly Row[]) =>
    bySelectivity(conditions, source).map((c) => (c.op === 'test' ? c.field : c.op));
  // status passes 7 rows in 10, term 1 in 8 (an `in` of two long texts), grade 1 in 7 (one number)
  const many: Row[] = Array.from({ length: 10_000 }, (_, i) => ({
    status: i % 10 < 7 ? 'completed' : 'failed',
    term: i % 8 === 0 ? '2023-autumn' : '2019-spring',
    grade: i % 7 === 0 ? 5 : 4,
  }));
  const status = conditionOf({ op: 'eq', field: 'status', value: 'completed' }, new Map([['status', { id: 'status', type: 'text' }]]));
  const term = conditionOf({ op: 'in', field: 'term', values: ['2023-autumn', '2024-spring'] }, new Map([['term', { id: 'term', type: 'text' }]]));
  const grade = conditionOf({ op: 'eq', field: 'grade', value: 5 }, new Map([['grade', { id: 'grade', type: 'numeric' }]]));

  test('the cheapest test per row it rejects goes first: a nearly as selective = before an in of two values', () => {
    // cost over rejected share: grade 2 / (6/7), term 3 / (7/8), status 2 / (3/10)
    expect(sorted([status, term, grade], many)).toEqual(['grade', 'term', 'status']);
  });

  test('on a small table, by cost alone (ties keep their order)', () => {
    expect(sorted([status, term, grade], many.slice(0, 1000))).toEqual(['status', 'grade', 'term']);
  });

  test('a test that rejects nothing in the sample goes last', () => {
    const always = conditionOf({ op: 'in', field: 'status', values: ['completed', 'failed'] }, new Map([['status', { id: 'status', type: 'text' }]]));
    expect(sorted([always, status], many)).toEqual(['status', 'status']);
    expect(bySelectivity([always, status], many)[0]).toBe(status);
  });
});
