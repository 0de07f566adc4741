import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { MAX_FIELDS, MAX_SORT_ITEMS, formatSort, normalizeRequest, parseSort } from '../../src/datastore/validate.js';
import { DatastoreError } from '../../src/errors.js';
import type { Filters } from '../../src/datastore/types.js';
import { propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

/** The error `fn` throws, as status and body (what the server would send). */
function failure(fn: () => unknown): { code: string; status: number | undefined; body: unknown } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    const e = error as DatastoreError;
    return { code: e.code, status: e.status, body: e.body };
  }
  throw new Error('expected an error');
}

const invalid = (param: string, message: string) => ({
  code: 'VALIDATION_ERROR',
  status: 409,
  body: { __type: 'Validation Error', [param]: [message] },
});

describe('normalizeRequest: the canonical form', () => {
  test('keys in canonical order, only those set', () => {
    const out = normalizeRequest({
      include_total: false, offset: 5, limit: 10, sort: 'a', fields: ['b'], q: 'x', filters: { c: 1 }, resource_id: 'r',
    });
    expect(Object.keys(out)).toEqual(['resource_id', 'filters', 'q', 'fields', 'sort', 'limit', 'offset', 'include_total']);
    expect(out).toEqual({
      resource_id: 'r', filters: { c: 1 }, q: 'x', fields: ['b'], sort: 'a asc', limit: 10, offset: 5, include_total: false,
    });
  });

  test('a minimal request stays minimal', () => {
    expect(normalizeRequest({ resource_id: 'r' })).toEqual({ resource_id: 'r' });
  });

  test('GET-style strings are read: limit, offset, fields, sort, filters JSON, include_total', () => {
    expect(
      normalizeRequest({
        resource_id: 'r', limit: ' 10 ', offset: '0', fields: 'title, "year" ,, x', sort: 'year desc,title',
        filters: '{"stage":["a","b"]}', include_total: 'no',
      }),
    ).toEqual({
      resource_id: 'r', filters: { stage: ['a', 'b'] }, fields: ['title', 'year', 'x'], sort: 'year desc, title asc',
      limit: 10, offset: 0, include_total: false,
    });
  });

  test.each([
    ['true', true], ['TRUE', true], ['1', true], ['yes', true], [1, true], [true, true],
    ['false', false], ['0', false], ['No', false], [0, false], [false, false],
  ])('include_total %j → %j (true, the default, is left out)', (value, expected) => {
    const out = normalizeRequest({ resource_id: 'r', include_total: value });
    expect(out.include_total).toBe(expected ? undefined : false);
  });

  test('blank q is no search', () => {
    expect(normalizeRequest({ resource_id: 'r', q: '' })).toEqual({ resource_id: 'r' });
    expect(normalizeRequest({ resource_id: 'r', q: ' \n\t\u00a0' })).toEqual({ resource_id: 'r' });
    expect(normalizeRequest({ resource_id: 'r', q: ' a ' }).q).toBe(' a ');
  });

  test('null means not sent', () => {
    expect(
      normalizeRequest({ resource_id: 'r', filters: null, q: null, fields: null, sort: null, limit: null, offset: null, include_total: null }),
    ).toEqual({ resource_id: 'r' });
  });

  test('empty filters, fields and sort are left out', () => {
    expect(normalizeRequest({ resource_id: 'r', filters: {}, fields: [], sort: [] })).toEqual({ resource_id: 'r' });
    expect(normalizeRequest({ resource_id: 'r', fields: '', sort: ' , ' })).toEqual({ resource_id: 'r' });
  });

  test('filter values: scalars and lists kept, -0 → 0, empty list kept (it matches nothing)', () => {
    expect(normalizeRequest({ resource_id: 'r', filters: { a: -0, b: [], c: [null, true, 'x', 2.5] } }).filters).toEqual({
      a: 0, b: [], c: [null, true, 'x', 2.5],
    });
    expect(Object.is((normalizeRequest({ resource_id: 'r', filters: { a: -0 } }).filters as Filters | undefined)?.a, 0)).toBe(true);
  });

  test('limit is capped only when maxLimit is given', () => {
    expect(normalizeRequest({ resource_id: 'r', limit: 50000 }).limit).toBe(50000);
    expect(normalizeRequest({ resource_id: 'r', limit: 50000 }, { maxLimit: 32000 }).limit).toBe(32000);
    expect(normalizeRequest({ resource_id: 'r', limit: 10 }, { maxLimit: 32000 }).limit).toBe(10);
  });

  test('the input is not changed', () => {
    const raw = { resource_id: 'r', filters: { a: [1] }, fields: 'a,b' };
    const copy = structuredClone(raw);
    normalizeRequest(raw);
    expect(raw).toEqual(copy);
  });

  test('normalizing is idempotent', () => {
    const raw = { resource_id: 'r', filters: '{"a":[1,"x"]}', sort: ['"school year" DESC', 'b'], fields: 'a, b', limit: '3' };
    const once = normalizeRequest(raw);
    expect(normalizeRequest(once)).toEqual(once);
  });
});

describe('normalizeRequest: errors with CKAN-shaped bodies', () => {
  test('not an object → 400 Bad Request', () => {
    for (const raw of [null, [], 'x', 3, undefined]) {
      const f = failure(() => normalizeRequest(raw));
      expect(f.code).toBe('BAD_REQUEST');
      expect(f.status).toBe(400);
      expect(f.body).toMatchObject({ __type: 'Bad Request' });
    }
  });

  test('resource_id missing or empty', () => {
    expect(failure(() => normalizeRequest({}))).toEqual(invalid('resource_id', 'Missing value'));
    expect(failure(() => normalizeRequest({ resource_id: '' }))).toEqual(invalid('resource_id', 'Missing value'));
    // CKAN's unicode_safe writes a number as its text
    expect(normalizeRequest({ resource_id: 5 }).resource_id).toBe('5');
    // `id` is the alias of `resource_id`, and wins when both are sent
    expect(normalizeRequest({ id: 'a', resource_id: 'b' }).resource_id).toBe('a');
  });

  test.each([
    [{ limit: -1 }, 'limit', 'Must be a natural number'],
    [{ limit: '-1' }, 'limit', 'Must be a natural number'],
    [{ limit: 1.5 }, 'limit', 'Invalid integer'],
    [{ offset: 'bad' }, 'offset', 'Invalid integer'],
    [{ offset: -1 }, 'offset', 'invalid value "-1"'],
    [{ filters: '{bad' }, 'filters', 'Cannot parse JSON'],
    [{ fields: 5 }, 'fields', 'Not a list'],
    [{ sort: {} }, 'sort', 'Not a list'],
    [{ sort: '"x" sideways' }, 'sort', 'invalid value "\\"x\\" sideways"'],
    [{ records_format: 'xml' }, 'records_format', "Value must be one of ['objects', 'lists', 'csv', 'tsv']"],
    [{ total_estimation_threshold: 'x' }, 'total_estimation_threshold', 'Invalid integer'],
    [{ sort: '"unclosed desc' }, 'sort', 'invalid value "\\"unclosed desc"'],
    [{ sort: 'a"b' }, 'sort', 'invalid value "a\\"b"'],
    [{ foo: 1 }, '__extras', 'invalid value "foo"'],
    [{ include_next_page: true }, '__extras', 'invalid value "include_next_page"'],
  ])('%j → %s: %s', (extra, param, message) => {
    expect(failure(() => normalizeRequest({ resource_id: 'r', ...extra }))).toEqual(invalid(param, message));
  });

  test.each(['bad', '5.0', '1e3'])('limit %j: CKAN\'s two messages (int_validator, then convert_int)', (limit) => {
    expect(failure(() => normalizeRequest({ resource_id: 'r', limit })).body).toEqual({
      limit: ['Invalid integer', 'Please enter an integer value'],
      __type: 'Validation Error',
    });
  });

  test('limit quirks CKAN has: true is 1, a huge whole number is capped', () => {
    expect(normalizeRequest({ resource_id: 'r', limit: true }).limit).toBe(1);
    expect(normalizeRequest({ resource_id: 'r', limit: 1e300 }, { maxLimit: 32000 }).limit).toBe(32000);
    expect(normalizeRequest({ resource_id: 'r', limit: '99999999999999999999999' }, { maxLimit: 32000 }).limit).toBe(32000);
  });

  test('2.12 knows include_next_page and ignores total_estimation_threshold', () => {
    expect(normalizeRequest({ resource_id: 'r', include_next_page: 'yes', total_estimation_threshold: 'x' }, { ckan: '2.12' })).toEqual({
      resource_id: 'r',
      include_next_page: true,
    });
  });

  test('filters that are not an object, and filter values that are objects or nested lists', () => {
    for (const filters of [[1], 5, '"x"', '[1]', true]) {
      expect(failure(() => normalizeRequest({ resource_id: 'r', filters })).body).toHaveProperty('filters');
    }
    // 2.11: psycopg2 cannot adapt a dict, PostgreSQL refuses a list inside an IN: CKAN's `Invalid query`
    const obj = failure(() => normalizeRequest({ resource_id: 'r', filters: { a: { b: 1 } } }));
    expect(obj.body).toEqual({ query: ['Invalid query'], info: { orig: ["can't adapt type 'dict'"] }, __type: 'Validation Error' });
    const nested = failure(() => normalizeRequest({ resource_id: 'r', filters: { a: [[1]] } }));
    expect((nested.body as { query: string[] }).query).toEqual(['Invalid query']);
  });

  test('non-finite numbers are not filter values', () => {
    expect(failure(() => normalizeRequest({ resource_id: 'r', filters: { a: Number.NaN } })).body).toHaveProperty('filters');
  });

  test('q: any value is text (CKAN\'s unicode_or_json_validator), an object a per-field search', () => {
    expect(normalizeRequest({ resource_id: 'r', q: 5 }).q).toBe('5');
    expect(normalizeRequest({ resource_id: 'r', q: true }).q).toBe('True');
    expect(normalizeRequest({ resource_id: 'r', q: ['a', 'b'] }).q).toBe("['a', 'b']");
    expect(normalizeRequest({ resource_id: 'r', q: { title: 'x' } }).q).toEqual({ title: 'x' });
    // JSON text of an object is that object, however it came (CKAN's validator parses every text)
    expect(normalizeRequest({ resource_id: 'r', q: ' {"title": "x"} ' }).q).toEqual({ title: 'x' });
    expect(normalizeRequest({ resource_id: 'r', q: '{x}' }).q).toBe('{x}');
    expect(normalizeRequest({ resource_id: 'r', q: '["a"]' }).q).toBe('["a"]');
  });

  test('a boolean that is no true word is false, as CKAN\'s boolean_validator reads it', () => {
    expect(normalizeRequest({ resource_id: 'r', include_total: 'maybe' }).include_total).toBe(false);
    expect(normalizeRequest({ resource_id: 'r', plain: 'f', distinct: 'y' })).toEqual({ resource_id: 'r', plain: false, distinct: true });
    expect(failure(() => normalizeRequest({ resource_id: 'r', plain: 7 })).body).toHaveProperty('plain');
  });

  test('a list of fields with a non-string', () => {
    expect(failure(() => normalizeRequest({ resource_id: 'r', fields: ['a', 1] })).body).toHaveProperty('fields');
  });

  test('several problems: every schema problem at once (keys sorted), unknown keys only after them', () => {
    const f = failure(() => normalizeRequest({ resource_id: 'r', zzz: 1, offset: 'x', limit: -1 }));
    expect(f.body).toEqual({ limit: ['Must be a natural number'], offset: ['Invalid integer'], __type: 'Validation Error' });
    expect(Object.keys(f.body as object)).toEqual(['limit', 'offset', '__type']);
  });
});

describe('normalizeRequest: hostile input', () => {
  test('__proto__ and constructor are ordinary filter keys', () => {
    const raw = JSON.parse('{"resource_id":"r","filters":{"__proto__":[1],"constructor":"x","toString":null}}') as unknown;
    const out = normalizeRequest(raw);
    expect(Object.keys(out.filters ?? {})).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(out.filters)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out.filters, '__proto__')?.value).toEqual([1]);
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });

  test('a __proto__ key at the top level is an unknown key, not a prototype', () => {
    const raw = JSON.parse('{"resource_id":"r","__proto__":{"limit":5}}') as unknown;
    expect(failure(() => normalizeRequest(raw))).toEqual(invalid('__extras', 'invalid value "__proto__"'));
  });

  test('inherited properties are not parameters', () => {
    const raw = Object.create({ limit: -1, filters: { a: 1 } }) as Record<string, unknown>;
    raw.resource_id = 'r';
    expect(normalizeRequest(raw)).toEqual({ resource_id: 'r' });
  });

  test('deep nesting is rejected without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(failure(() => normalizeRequest({ resource_id: 'r', filters: { a: deep } })).body).toHaveProperty('filters');
    expect(failure(() => normalizeRequest({ resource_id: 'r', q: deep })).body).toHaveProperty('q');
  });

  test('a huge list is fine, a huge unknown key is quoted briefly', () => {
    const big = Array.from({ length: 200_000 }, (_, i) => i);
    expect((normalizeRequest({ resource_id: 'r', filters: { a: big } }).filters as Filters | undefined)?.a).toHaveLength(200_000);
    const f = failure(() => normalizeRequest({ resource_id: 'r', ['k'.repeat(100_000)]: 1 }));
    expect(JSON.stringify(f.body).length).toBeLessThan(1000);
  });

  test('any JSON object either normalizes or gives a DatastoreError', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('resource_id', 'filters', 'q', 'fields', 'sort', 'limit', 'offset', 'include_total', 'x'), fc.jsonValue()), (raw) => {
        try {
          const out = normalizeRequest(raw);
          expect(normalizeRequest(out)).toEqual(out);
        } catch (error) {
          expect(error).toBeInstanceOf(DatastoreError);
        }
      }),
      propertyParameters(scaledRuns(2000)),
    );
  });
});

describe('sort text', () => {
  test('parseSort reads CKAN-style items', () => {
    expect(parseSort('year desc, "school, year", title ASC, school year desc')).toEqual([
      { field: 'year', direction: 'desc' },
      { field: 'school, year', direction: 'asc' },
      { field: 'title', direction: 'asc' },
      { field: 'school year', direction: 'desc' },
    ]);
    expect(parseSort('"say ""hi""" desc')).toEqual([{ field: 'say "hi"', direction: 'desc' }]);
    expect(parseSort('asc asc, desc')).toEqual([{ field: 'asc', direction: 'asc' }, { field: 'desc', direction: 'asc' }]);
  });

  test('formatSort quotes what is not a plain identifier', () => {
    expect(formatSort([{ field: 'year', direction: 'desc' }, { field: 'school year', direction: 'asc' }])).toBe(
      'year desc, "school year" asc',
    );
    expect(formatSort([{ field: 'größe', direction: 'asc' }, { field: 'a"b', direction: 'desc' }])).toBe('"größe" asc, "a""b" desc');
  });

  test('formatSort and parseSort round-trip any field name', () => {
    const item = fc.record({ field: fc.string({ minLength: 1 }), direction: fc.constantFrom('asc' as const, 'desc' as const) });
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 4 }), (items) => {
        expect(parseSort(formatSort(items))).toEqual(items);
      }),
      propertyParameters(scaledRuns(1000)),
    );
  });
});

describe('linear in the input, bounded in size', () => {
  /** The fastest of a few runs, in ms: noise only ever adds time. */
  /** CPU µs of the fastest of three runs: CPU time, so that another process's turn on the core does not count. */
  function fastest(run: () => void): number {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const start = process.cpuUsage();
      run();
      const spent = process.cpuUsage(start);
      best = Math.min(best, spent.user + spent.system);
    }
    return best;
  }

  test.each([
    ['spaces inside a name', (n: number) => `a${' '.repeat(n)}b`],
    ['spaces before a direction', (n: number) => `a${' '.repeat(n)}desc`],
    ['spaces around nulls', (n: number) => `a desc${' '.repeat(n)}nulls${' '.repeat(n)}x`],
    ['a quoted name', (n: number) => `"${'x'.repeat(n)}"${' '.repeat(n)}desc`],
  ])('sort items: 4x the input costs about 4x, not 16x (%s)', (_what, make) => {
    const read = (n: number) => () => {
      try {
        normalizeRequest({ resource_id: 'r', sort: make(n) });
      } catch {
        // a Validation Error is an answer too
      }
    };
    read(1000)(); // warm up
    // Each measurement reads the item a few times, so that it lasts a millisecond or more, not noise.
    const repeated = (n: number) => () => {
      for (let i = 0; i < 4; i++) read(n)();
    };
    // Pairs measured back to back; the best pair's ratio is judged, since load on the machine
    // only ever spoils a pair. Quadratic would be 16x in every pair (the old pattern took seconds
    // at 32,000 characters, so 200,000 would take minutes); linear is 4x.
    let best = Infinity;
    for (let pair = 0; pair < 4 && best >= 9; pair++) {
      const small = fastest(repeated(50_000));
      const large = fastest(repeated(200_000));
      best = Math.min(best, large / Math.max(small, 1));
    }
    expect(best).toBeLessThan(9);
  });

  test('too many sort items or fields are refused with the bound in the message', () => {
    const sort = Array.from({ length: MAX_SORT_ITEMS + 1 }, (_, i) => `f${i}`).join(',');
    expect(failure(() => normalizeRequest({ resource_id: 'r', sort })).body).toEqual({
      sort: [`too many items: ${MAX_SORT_ITEMS + 1} (at most ${MAX_SORT_ITEMS})`],
      __type: 'Validation Error',
    });
    const fields = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => `f${i}`);
    expect(failure(() => normalizeRequest({ resource_id: 'r', fields })).body).toHaveProperty('fields');
    expect(normalizeRequest({ resource_id: 'r', sort: Array.from({ length: MAX_SORT_ITEMS }, (_, i) => `f${i}`) }).sort).toMatch(/^f0 asc, /);
  });

  test('nulls first|last is read and written back', () => {
    expect(parseSort('a desc nulls last, "b c" NULLS  FIRST')).toEqual([
      { field: 'a', direction: 'desc', nulls: 'last' },
      { field: 'b c', direction: 'asc', nulls: 'first' },
    ]);
    expect(normalizeRequest({ resource_id: 'r', sort: ['a desc nulls last', 'b nulls first'] }).sort).toBe('a desc nulls last, b asc nulls first');
  });
});
