import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import { fromRequest } from '../../../src/compile/from-request.js';
import type { Row, Scalar, SearchResult } from '../../../src/datastore/types.js';
import { DatastoreError, QueryError } from '../../../src/errors.js';
import { propertyParameters, scaledRuns } from '../../helpers/arbitraries.js';

const rows: Row[] = [
  { title: 'Linear Algebra', subject: 'math', year: 2020, stage: 'active' },
  { title: 'Poetry', subject: 'arts', year: 2021, stage: 'Active' },
  { title: 'Geometry', subject: 'math', year: 2021, stage: null },
  { title: 'Ｃａｌｃｕｌｕｓ', subject: 'math', year: '2019', stage: 'survey' },
  { title: 'Café', subject: null, year: 2022 },
];
const courses = tableFromRows(rows, { alias: 'courses' });
const ids = (result: SearchResult): unknown[] => result.records.map((r) => r._id);

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('evaluateQuery walks the AST', () => {
  test('= and in by canonical text; null only null', () => {
    expect(ids(evaluateQuery('from courses where year = 2021', courses))).toEqual([2, 3]);
    expect(ids(evaluateQuery('from courses where year = "2019"', courses))).toEqual([4]);
    expect(ids(evaluateQuery('from courses where year in (2019, 2022)', courses))).toEqual([4, 5]);
    expect(ids(evaluateQuery('from courses where stage = null', courses))).toEqual([3, 5]);
    expect(ids(evaluateQuery('from courses where stage = "null"', courses))).toEqual([]);
    expect(ids(evaluateQuery('from courses where stage in ()', courses))).toEqual([]);
  });

  test('or across fields, which a request cannot say, and nested groups', () => {
    expect(ids(evaluateQuery('from courses where (subject = arts or year = 2019)', courses))).toEqual([2, 4]);
    expect(ids(evaluateQuery('from courses where subject = math and (stage = active or year = 2021)', courses))).toEqual([1, 3]);
    expect(ids(evaluateQuery('from courses where ((subject = arts and year = 2021) or stage = survey)', courses))).toEqual([2, 4]);
  });

  test('search, order, limit, offset, select', () => {
    const result = evaluateQuery('from courses select title, _id where subject = math search "  CALC " order by year desc limit 5 offset 0', courses);
    expect(result.records).toEqual([{ title: 'Ｃａｌｃｕｌｕｓ', _id: 4 }]);
    expect(result).toMatchObject({ total: 1, limit: 5, offset: 0, q: '  CALC ', sort: 'year desc', include_total: true });
    expect(result.fields).toEqual([{ id: 'title', type: 'text' }, { id: '_id', type: 'int' }]);
    expect(ids(evaluateQuery('from courses order by stage desc, _id desc', courses))).toEqual([5, 3, 4, 1, 2]);
  });

  test('a blank search is no search and is not echoed', () => {
    const result = evaluateQuery('from courses search "   "', courses);
    expect(result.total).toBe(5);
    expect(result).not.toHaveProperty('q');
  });

  test('limit is capped at 32000 and defaults to 100', () => {
    expect(evaluateQuery('from courses limit 50000', courses).limit).toBe(32000);
    expect(evaluateQuery('from courses', courses).limit).toBe(100);
  });

  test('parameters are bound; a list spreads into in (…)', () => {
    const result = evaluateQuery('from $r where year in ($ys) and subject = $s limit $n', rows, { r: 'courses', ys: [2021, 2019], s: 'math', n: 1 });
    expect(result.records).toEqual([{ _id: 3, title: 'Geometry', subject: 'math', year: 2021, stage: null }]);
    expect(result.total).toBe(2);
    expect(result.resource_id).toBe('courses');
  });

  test('an unbound parameter is UNBOUND_PARAMETER at its span', () => {
    const source = 'from courses where subject = $s and year = $y';
    const error = thrown(() => evaluateQuery(source, courses, { y: 2020 }));
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe('UNBOUND_PARAMETER');
    const { start, end } = (error as QueryError).span;
    expect(source.slice(start, end)).toBe('$s');
  });

  test('unknown names give the Validation Errors of evaluate, in the same order', () => {
    for (const [query, body] of [
      ['from courses where nope = 1', { __type: 'Validation Error', filters: ['invalid value "nope"'] }],
      ['from courses select title, nope', { __type: 'Validation Error', fields: ['invalid value "nope"'] }],
      ['from courses order by nope desc', { __type: 'Validation Error', sort: ['invalid value "nope desc"'] }],
      ['from courses select nope where nope = 1 order by nope', { __type: 'Validation Error', fields: ['invalid value "nope"'] }],
    ] as const) {
      const error = thrown(() => evaluateQuery(query, courses));
      expect(error).toBeInstanceOf(DatastoreError);
      expect((error as DatastoreError).body).toEqual(body);
    }
  });

  test('over plain rows an unknown name is the Validation Error the server gives', () => {
    for (const query of ['from x where nope = null', 'from x where (nope = 1 or subject = arts)', 'from x search nope "a"', 'from x order by nope']) {
      const error = thrown(() => evaluateQuery(query, rows));
      expect(error, query).toBeInstanceOf(DatastoreError);
      expect((error as DatastoreError).status).toBe(409);
    }
  });
});

describe('the whole question', () => {
  test('three-valued logic: a test on null is unknown, and not unknown is unknown', () => {
    expect(ids(evaluateQuery('from courses where stage != active', courses))).toEqual([2, 4]);
    expect(ids(evaluateQuery('from courses where not stage = active', courses))).toEqual([2, 4]);
    expect(ids(evaluateQuery('from courses where not (stage = active or subject = arts)', courses))).toEqual([4]);
    expect(ids(evaluateQuery('from courses where stage is null or stage = survey', courses))).toEqual([3, 4, 5]);
    expect(ids(evaluateQuery('from courses where not stage is not null', courses))).toEqual([3, 5]);
    expect(ids(evaluateQuery('from courses where stage not in (active, null)', courses))).toEqual([2, 4]);
    expect(ids(evaluateQuery('from courses where stage in ()', courses))).toEqual([]);
    expect(ids(evaluateQuery('from courses where not stage in ()', courses))).toEqual([1, 2, 3, 4, 5]);
  });

  test('ordering comparisons read the value as the field type', () => {
    // year is inferred as a number from its first value, and "2019" in the data reads as 2019
    expect(ids(evaluateQuery('from courses where year < 2021', courses))).toEqual([1, 4]);
    expect(ids(evaluateQuery('from courses where year >= "2021"', courses))).toEqual([2, 3, 5]);
    expect(ids(evaluateQuery('from courses where year between 2021 and 2020', courses))).toEqual([]);
    expect(ids(evaluateQuery('from courses where title > "P"', courses))).toEqual([2, 4]); // code points: Ｃ (U+FF23) sorts after P
    const typed = { id: 't', aliases: ['t'], fields: [{ id: '_id', type: 'int' as const }, { id: 'n', type: 'int' as const }], rows: [{ _id: 1, n: 1 }] };
    const error = thrown(() => evaluateQuery('from t where n > "soon"', typed)) as DatastoreError;
    expect(error.body).toEqual({ __type: 'Validation Error', filters: ['"soon" is not a valid int value for the field "n"'] });
    expect(ids(evaluateQuery('from t where n > "0"', typed))).toEqual([1]);
  });

  test('like and ilike: % _ and escapes, by code point', () => {
    expect(ids(evaluateQuery('from courses where title like "%try"', courses))).toEqual([2, 3]);
    expect(ids(evaluateQuery('from courses where title like "Caf_"', courses))).toEqual([5]);
    expect(ids(evaluateQuery('from courses where title ilike "café"', courses))).toEqual([5]);
    expect(ids(evaluateQuery('from courses where title like "caf_"', courses))).toEqual([]);
    const escapes = [{ t: '50%' }, { t: '50x' }, { t: 'a_b' }, { t: 'axb' }, { t: 'a\\b' }];
    expect(ids(evaluateQuery(String.raw`from x where t like "50\\%"`, escapes))).toEqual([1]);
    expect(ids(evaluateQuery(String.raw`from x where t like "a\\_b"`, escapes))).toEqual([3]);
    expect(ids(evaluateQuery(String.raw`from x where t like "a\\\\b"`, escapes))).toEqual([5]);
  });

  test('per-field search, prefix words, and language (which changes nothing locally)', () => {
    expect(ids(evaluateQuery('from courses search subject "math", title "geo"', courses))).toEqual([3]);
    expect(ids(evaluateQuery('from courses search "alg* lin"', courses))).toEqual([1]);
    expect(ids(evaluateQuery('from courses search "linear algebra" language german', courses))).toEqual([1]);
    expect(ids(evaluateQuery('from courses search title "calc*"', courses))).toEqual([4]); // NFKC folds the full-width letters
  });

  test('select distinct keeps the first of equal projections; nulls first|last', () => {
    expect(evaluateQuery('from courses select distinct subject', courses).records).toEqual([
      { subject: 'math' }, { subject: 'arts' }, { subject: null },
    ]);
    expect(evaluateQuery('from courses select distinct subject', courses).total).toBe(3);
    expect(ids(evaluateQuery('from courses order by stage nulls first', courses))).toEqual([3, 5, 2, 1, 4]);
    expect(ids(evaluateQuery('from courses order by stage desc nulls last', courses))).toEqual([4, 1, 2, 3, 5]);
    expect(evaluateQuery('from courses order by stage desc nulls last', courses).sort).toBe('stage desc nulls last');
  });

  test('refuses an empty resource name', () => {
    expect((thrown(() => evaluateQuery("from ''", courses)) as QueryError).code).toBe('EMPTY_RESOURCE');
  });
});

describe('evaluateQuery agrees with evaluate', () => {
  const values: Scalar[] = ['math', 'arts', 2021, '2021', 2019, '2019', null, 'null', 'active', 'Active', 'survey', 'x'];
  const fieldNames = ['title', 'subject', 'year', 'stage', '_id'];
  const request = fc.record(
    {
      filters: fc.dictionary(fc.constantFrom(...fieldNames), fc.oneof(fc.constantFrom(...values), fc.array(fc.constantFrom(...values), { maxLength: 3 })), { maxKeys: 3 }),
      q: fc.constantFrom('a', 'ALG', 'é', 'cafe', '20', 'calc', 'math'),
      sort: fc.uniqueArray(fc.constantFrom(...fieldNames), { maxLength: 2 }).chain((names) =>
        fc.tuple(...names.map((n) => fc.constantFrom(`${n} asc`, `${n} desc`))).map((items) => items.join(', '))),
      fields: fc.uniqueArray(fc.constantFrom(...fieldNames), { minLength: 1, maxLength: 3 }),
      limit: fc.integer({ min: 0, max: 6 }),
      offset: fc.integer({ min: 0, max: 6 }),
    },
    { requiredKeys: [] },
  );

  test('evaluateQuery(fromRequest(r), t) = evaluate(r, t), over the table and over plain rows', () => {
    fc.assert(
      fc.property(request, (r) => {
        const wire = { resource_id: 'courses', ...r, ...(r.sort === '' ? { sort: undefined } : {}) };
        const query = fromRequest(wire);
        for (const source of [courses, rows]) {
          const expected = evaluate(wire, source);
          const got = evaluateQuery(query, source);
          expect(got.records).toEqual(expected.records);
          expect(got.total).toBe(expected.total);
          expect(got.fields).toEqual(expected.fields);
          expect(got.limit).toBe(expected.limit);
        }
      }),
      propertyParameters(scaledRuns(1500)),
    );
  });

  test('(a = x or b = y) is the union of a = x and b = y', () => {
    fc.assert(
      fc.property(fc.constantFrom(...fieldNames), fc.constantFrom(...values), fc.constantFrom(...fieldNames), fc.constantFrom(...values), (f, x, g, y) => {
        const lit = (v: Scalar): string => (v === null ? 'null' : JSON.stringify(v));
        const either = ids(evaluateQuery(`from courses where (${f} = ${lit(x)} or ${g} = ${lit(y)})`, courses));
        const one = ids(evaluateQuery(`from courses where ${f} = ${lit(x)}`, courses));
        const other = ids(evaluateQuery(`from courses where ${g} = ${lit(y)}`, courses));
        expect(either).toEqual([...new Set([...one, ...other])].sort((a, b) => Number(a) - Number(b)));
      }),
      propertyParameters(scaledRuns(300)),
    );
  });
});
