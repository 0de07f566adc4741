/**
 * `parseFilters`: CKAN 2.12's filter language rule for rule (the examples
 * and limits of docs/ckan-2.12-reference.md §1.2–1.6) and 2.11's dict.
 */
import { describe, expect, test } from 'vitest';
import { MAX_FILTER_OPERATIONS, parseFilters, pythonRepr } from '../../src/datastore/filters.js';
import type { FieldInfo } from '../../src/datastore/types.js';
import { DatastoreError } from '../../src/errors.js';

const fields: readonly FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'num', type: 'int4' },
  { id: 'course', type: 'text' },
  { id: 'special', type: 'bool' },
  { id: '$AUD', type: 'numeric' },
  { id: 'characters', type: '_text' },
];
const v212 = { ckan: '2.12', fields } as const;
const v211 = { ckan: '2.11', fields } as const;

function failure(fn: () => unknown): { status: number | undefined; body: unknown } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    return { status: (error as DatastoreError).status, body: (error as DatastoreError).body };
  }
  throw new Error('expected an error');
}

const filtersError = (...messages: string[]) => ({ status: 409, body: { __type: 'Validation Error', filters: messages } });

describe('2.12: the grammar', () => {
  test('the reference examples', () => {
    expect(parseFilters({ num: { gt: 5, lt: 9 } }, v212)).toEqual({
      op: 'and',
      of: [{ op: 'gt', field: 'num', value: 5 }, { op: 'lt', field: 'num', value: 9 }],
    });
    // mixed list: the operations first, then one `in` of the values
    expect(parseFilters({ num: [{ lte: 1 }, 7, { gte: 10 }] }, v212)).toEqual({
      op: 'or',
      of: [{ op: 'lte', field: 'num', value: 1 }, { op: 'gte', field: 'num', value: 10 }, { op: 'in', field: 'num', values: [7] }],
    });
    expect(parseFilters([{ course: 'appetizer', special: false }, { special: true }], v212)).toEqual({
      op: 'or',
      of: [
        { op: 'and', of: [{ op: 'eq', field: 'course', value: 'appetizer' }, { op: 'eq', field: 'special', value: false }] },
        { op: 'eq', field: 'special', value: true },
      ],
    });
    expect(parseFilters({ special: false, $or: [{ course: 'appetizer' }, { _id: { gt: 2 } }] }, v212)).toEqual({
      op: 'and',
      of: [
        { op: 'eq', field: 'special', value: false },
        { op: 'or', of: [{ op: 'eq', field: 'course', value: 'appetizer' }, { op: 'gt', field: '_id', value: 2 }] },
      ],
    });
    // a root $and is merged into the root AND
    expect(parseFilters({ $and: [{ num: 1 }], num: 2 }, v212)).toEqual({
      op: 'and',
      of: [{ op: 'eq', field: 'num', value: 1 }, { op: 'eq', field: 'num', value: 2 }],
    });
    expect(parseFilters({ num: [] }, v212)).toEqual({ op: 'in', field: 'num', values: [] });
  });

  test('same-kind nesting is flattened', () => {
    expect(parseFilters({ $or: [{ num: 1 }, { $or: [{ num: 2 }, { num: 3 }] }] }, v212)).toEqual({
      op: 'or',
      of: [1, 2, 3].map((value) => ({ op: 'eq', field: 'num', value })),
    });
  });

  test('$$ escapes a field that starts with $; an unescaped one is an unknown operator', () => {
    expect(parseFilters({ $$AUD: 100 }, v212)).toEqual({ op: 'eq', field: '$AUD', value: 100 });
    expect(failure(() => parseFilters({ $AUD: 100 }, v212))).toEqual(filtersError('Unknown operators (must be one of $or, $and): $AUD'));
  });

  test('array columns: a list is an `in`; equality needs `eq`', () => {
    expect(parseFilters({ characters: { eq: ['Princess Anna', 'Sergius'] } }, v212)).toEqual({
      op: 'eq',
      field: 'characters',
      value: ['Princess Anna', 'Sergius'],
    });
    expect(parseFilters({ characters: ['a', 'b'] }, v212)).toEqual({ op: 'in', field: 'characters', values: ['a', 'b'] });
  });

  test('falsy filters are no filter', () => {
    for (const value of [{}, null, '', 0, false]) expect(parseFilters(value, v212)).toBeUndefined();
  });
});

describe('2.12: limits', () => {
  const nestedOr = (levels: number): unknown => {
    let inner: unknown = { num: 1 };
    for (let i = 0; i < levels; i++) inner = { $or: [inner, { num: 2 }] };
    return inner;
  };

  test('9 nested $or are fine, 10 reach the depth limit', () => {
    expect(parseFilters(nestedOr(9), v212)).toBeDefined();
    expect(failure(() => parseFilters(nestedOr(10), v212))).toEqual(filtersError('Maximum nesting depth for filter operations reached'));
  });

  test('a top-level list counts as a level: list + 8 nested $or fine, + 9 not', () => {
    expect(parseFilters([nestedOr(8)], v212)).toBeDefined();
    expect(failure(() => parseFilters([nestedOr(9)], v212))).toEqual(filtersError('Maximum nesting depth for filter operations reached'));
  });

  test('operation counts: 99 members of $or = 100 ops fine, 100 members too many', () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => ({ num: i }));
    expect(parseFilters({ $or: members(99) }, v212)).toBeDefined();
    expect(failure(() => parseFilters({ $or: members(100) }, v212))).toEqual(filtersError('Maximum number of filter operations exceeded'));
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => ({ num: i, course: 'x' }));
    expect(parseFilters({ $or: pairs(33) }, v212)).toBeDefined();
    expect(failure(() => parseFilters({ $or: pairs(34) }, v212))).toEqual(filtersError('Maximum number of filter operations exceeded'));
  });

  test('an `in` list is one operation, however long', () => {
    expect(parseFilters({ num: Array.from({ length: 1000 }, (_, i) => i) }, v212)).toMatchObject({ op: 'in' });
  });

  test('a root list of 100 dicts, or a dict of 100 keys, is refused at once', () => {
    const list = Array.from({ length: MAX_FILTER_OPERATIONS }, () => ({ num: 1 }));
    expect(failure(() => parseFilters(list, v212))).toEqual(filtersError('Maximum number of filter operations exceeded'));
    const dict = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, 1]));
    expect(failure(() => parseFilters(dict, v212))).toEqual(filtersError('Maximum number of filter operations exceeded'));
  });
});

describe('2.12: errors, word for word', () => {
  test.each([
    ['"5"', 5],
    ['[1, 2]', [1, 2]],
    ['a list with a non-dict', [{ num: 1 }, 'x']],
  ])('F1 for %s', (_what, filters) => {
    expect(failure(() => parseFilters(filters, v212))).toEqual(filtersError('Filters must be defined as a dict or a list of dicts'));
  });

  test('F4, F5, F6 are collected and reported together', () => {
    expect(failure(() => parseFilters({ $not: [], $or: { num: 1 }, nope: 1, bad: 2 }, v212))).toEqual(
      filtersError(
        'Unknown operators (must be one of $or, $and): $not',
        "Filter operations must be defined as a list of dicts: {'num': 1}",
        'Unknown field: nope',
        'Unknown field: bad',
      ),
    );
    expect(failure(() => parseFilters({ $AND: [] }, v212))).toEqual(filtersError('Unknown operators (must be one of $or, $and): $AND'));
  });

  test('F9: an operation CKAN does not know, with its Python form', () => {
    expect(failure(() => parseFilters({ num: { ne: 1 } }, v212))).toEqual(filtersError("Unknown filter operation: FilterOp(field='num', op='ne', value=1)"));
    expect(failure(() => parseFilters({ num: { EQ: 'a' } }, v212))).toEqual(filtersError("Unknown filter operation: FilterOp(field='num', op='EQ', value='a')"));
  });

  test("CKAN's 500s are 409s here", () => {
    expect(failure(() => parseFilters({ num: {} }, v212)).status).toBe(409);
    expect(failure(() => parseFilters({ num: [{}] }, v212)).status).toBe(409);
    expect(failure(() => parseFilters({ num: { in: 5 } }, v212)).status).toBe(409);
    expect(failure(() => parseFilters({ num: { $or: [{ num: 1 }] } }, v212)).status).toBe(409);
    expect(failure(() => parseFilters([], v212)).status).toBe(409);
    expect(failure(() => parseFilters([{}], v212)).status).toBe(409);
  });

  test('operators that yield nothing are no filter (the server then refuses the leftover key, F7)', () => {
    expect(parseFilters({ $or: [] }, v212)).toBeUndefined();
    expect(parseFilters({ num: 5, $or: [] }, v212)).toEqual({ op: 'eq', field: 'num', value: 5 });
  });

  test('without the table, field names are not checked', () => {
    expect(parseFilters({ anything: { gte: 1 } }, { ckan: '2.12' })).toEqual({ op: 'gte', field: 'anything', value: 1 });
  });
});

describe('2.11: the dict', () => {
  test('scalars are eq, lists in, a list on an array column the whole array', () => {
    expect(parseFilters({ num: 1, course: ['a', 'b'], characters: ['Princess Anna', 'Sergius'] }, v211)).toEqual({
      op: 'and',
      of: [
        { op: 'eq', field: 'num', value: 1 },
        { op: 'in', field: 'course', values: ['a', 'b'] },
        { op: 'eq', field: 'characters', value: ['Princess Anna', 'Sergius'] },
      ],
    });
  });

  test('an unknown key, an operator dict, a list filter', () => {
    expect(failure(() => parseFilters({ nope: 1 }, v211))).toEqual({ status: 409, body: { __type: 'Validation Error', filters: ['invalid value "nope"'] } });
    expect(failure(() => parseFilters({ num: { gt: 5 } }, v211))).toEqual({
      status: 409,
      body: { query: ['Invalid query'], info: { orig: ["can't adapt type 'dict'"] }, __type: 'Validation Error' },
    });
    expect(failure(() => parseFilters([{ num: 1 }], v211)).status).toBe(409);
    expect(failure(() => parseFilters({ $$AUD: 1 }, v211))).toEqual({ status: 409, body: { __type: 'Validation Error', filters: ['invalid value "$$AUD"'] } });
    expect(parseFilters({ $AUD: 100 }, v211)).toEqual({ op: 'and', of: [{ op: 'eq', field: '$AUD', value: 100 }] });
  });
});

test('pythonRepr writes values as CKAN messages print them, cut short', () => {
  expect(pythonRepr({ num: [1, 'x', null, true, 1.5] })).toBe("{'num': [1, 'x', None, True, 1.5]}");
  expect(pythonRepr("it's")).toBe('"it\'s"');
  expect(pythonRepr(Array.from({ length: 10_000 }, () => 1)).length).toBeLessThan(400);
});
