import { describe, expect, it } from 'vitest';
import { compile, plan } from '../../src/compile/compile.js';
import { parseTarget } from '../../src/compile/plan.js';
import { QueryError } from '../../src/errors.js';
import { format } from '../../src/format.js';

function failure(fn: () => unknown): QueryError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    return error as QueryError;
  }
  throw new Error('expected a QueryError');
}

describe('compile for a target', () => {
  it('keeps the older compile(query, params) form, and reads { target, params } as options', () => {
    expect(compile('from c where a = $x', { x: 1 })).toEqual({ resource_id: 'c', filters: { a: 1 } });
    expect(compile('from c where a = $x', { params: { x: 1 } })).toEqual({ resource_id: 'c', filters: { a: 1 } });
    expect(compile('from c where a >= $x', { target: 'ckan-2.12', params: { x: 1 } })).toEqual({
      resource_id: 'c',
      filters: { a: { gte: 1 } },
    });
    // a parameter that happens to be named target, with a value that is no target, is a parameter
    expect(compile('from c where a = $target', { target: 'x' })).toEqual({ resource_id: 'c', filters: { a: 'x' } });
  });

  it('keeps a 2.12 filter on a field named __proto__ when conditions are merged (it was assigned as the prototype, and lost)', () => {
    const request = compile('from c where a = x and `__proto__` between 0 and 5', { target: 'ckan-2.12' });
    expect(JSON.stringify(request.filters)).toBe('{"a":"x","__proto__":{"gte":0,"lte":5}}');
    expect(Object.getPrototypeOf(request.filters)).toBe(Object.prototype);
  });

  it('gives the same request on 2.11 and 2.12 when the 2.11 dict says it', () => {
    const query = 'from c where a in (1, 2) and a = 2 and (b = x or b = y)';
    expect(compile(query, { target: 'ckan-2.12' })).toEqual(compile(query));
  });

  it('refuses what needs a residual, naming the construct and the target, at its span', () => {
    const source = 'from c where a = 1 and b >= 5';
    const error = failure(() => compile(source));
    expect(error.code).toBe('TARGET_CANNOT_EXPRESS');
    expect(error.message).toContain('">="');
    expect(error.message).toContain('ckan-2.11');
    expect(source.slice(error.span.start, error.span.end)).toBe('b >= 5');
    expect(error.source).toBe(source);
    const notEqual = failure(() => compile('from c where a != 1', { target: 'ckan-2.12' }));
    expect(notEqual.message).toContain('"!="');
    expect(notEqual.hint).toContain('sql');
    expect(failure(() => compile('from c where (a = 1 or b like "x%")', { target: 'ckan-2.12' })).message).toContain('"like"');
  });

  it('refuses what one request cannot say (group, aggregate, join, having, rename, facet) on a CKAN target, at its construct', () => {
    // [query, the text the error points at, the construct its message names]
    const cases: [string, string, string][] = [
      ['from courses group by subject select subject, count(*) as n', 'group by subject', '"group by"'],
      ['from courses select count(*)', 'count(*)', '"count"'],
      ['from courses select max(credits), subject group by subject', 'max(credits)', '"max"'],
      ['from courses select year(start_date) as y', 'year(start_date)', '"year"'],
      ['from courses select code as c', 'code as c', '"as"'],
      ['from courses group by subject select subject having count(*) > 2', 'group by subject', '"group by"'],
      ['from courses group by subject select subject order by count(*) desc', 'group by subject', '"group by"'],
      ['from courses c join schools s on c.school = s.code select c.code', 'join schools s on c.school = s.code', '"join"'],
      ['from courses facet subject', 'facet subject', '"facet"'],
    ];
    for (const target of ['ckan-2.11', 'ckan-2.12'] as const) {
      for (const [source, pointed, construct] of cases) {
        const error = failure(() => compile(source, { target }));
        expect(error.code, source).toBe('TARGET_CANNOT_EXPRESS');
        expect(source.slice(error.span.start, error.span.end), source).toBe(pointed);
        expect(error.message, source).toContain(`${construct} cannot be sent to a ${target} portal`);
        expect(error.source, source).toBe(source);
        // the hint names the functions that run or show the whole query
        for (const name of ['client.search', 'plan()', 'ckql explain', 'evaluateQuery()']) expect(error.hint, source).toContain(name);
      }
    }
  });

  it('compiles a grouped or joined query for the sql target (one SELECT), but refuses its facets (a second statement)', () => {
    expect(compile('from courses group by subject select subject, count(*) as n', { target: 'sql' }).sql).toContain('GROUP BY');
    const error = failure(() => compile('from courses where level = 1 facet subject', { target: 'sql' }));
    expect(error.code).toBe('TARGET_CANNOT_EXPRESS');
    expect(error.message).toContain('"facet" cannot be sent to a sql portal');
    expect(error.hint).not.toContain('compile for target sql');
  });

  it('keeps the precise 2.11 errors for "or" across fields and "and" inside "or"', () => {
    expect(failure(() => compile('from c where (a = 1 or b = 2)')).code).toBe('OR_ACROSS_FIELDS');
    expect(failure(() => compile('from c where ((a = 1 and b = 2) or a = 3)')).code).toBe('AND_INSIDE_OR');
  });

  it('refuses an empty resource name', () => {
    const error = failure(() => compile("from ''"));
    expect(error.code).toBe('EMPTY_RESOURCE');
    expect(error.span).toEqual({ start: 5, end: 7 });
    expect(failure(() => compile('from $r', { r: '' })).code).toBe('INVALID_PARAMETER');
  });

  it('reads target names', () => {
    expect(parseTarget('2.12')).toBe('ckan-2.12');
    expect(parseTarget('CKAN-2.11')).toBe('ckan-2.11');
    expect(parseTarget('sql')).toBe('sql');
    expect(parseTarget('2.13')).toBeUndefined();
  });
});

describe('ckan-2.12 filters', () => {
  const filters = (where: string) => (compile(`from c where ${where}`, { target: 'ckan-2.12' }) as { filters?: unknown }).filters;

  it('writes each comparison as an operator, and joins two on one field', () => {
    expect(filters('a > 1 and a <= 5')).toEqual({ a: { gt: 1, lte: 5 } });
    expect(filters('a between "2020-01-01" and "2020-12-31"')).toEqual({ a: { gte: '2020-01-01', lte: '2020-12-31' } });
  });

  it('puts a repeated operator of one field in $and', () => {
    expect(filters('a > 1 and a > 2')).toEqual({ a: { gt: 1 }, $and: [{ a: { gt: 2 } }] });
  });

  it('writes "or" as $or, nested as written', () => {
    expect(filters('a > 1 or (b = 2 and c < 3)')).toEqual({ $or: [{ a: { gt: 1 } }, { b: 2, c: { lt: 3 } }] });
  });

  it('doubles the leading $ of a field name', () => {
    expect(filters('`$AUD` > 100')).toEqual({ $$AUD: { gt: 100 } });
    expect(filters('`$AUD` = 100 and a in (1, 2)')).toEqual({ $$AUD: 100, a: [1, 2] });
    expect(compile('from c where `$AUD` = 100')).toEqual({ resource_id: 'c', filters: { $AUD: 100 } }); // 2.11 reads it as it is
  });

  it('leaves to the residual what 2.12 cannot say: !=, not, like, is null, null values', () => {
    for (const where of ['a != 1', 'not a = 1', 'a like "x"', 'a is null', 'a = null', 'a in (1, null)', 'a > null']) {
      const planned = plan(`from c where ${where}`, { target: 'ckan-2.12' });
      expect(planned.request, where).toEqual({ resource_id: 'c', sort: '_id asc' });
      expect(planned.residual, where).toBeDefined();
    }
  });

  it('sends nothing of the where when the tree would pass CKAN limits', () => {
    const many = Array.from({ length: 120 }, (_, i) => `a = ${i}`).join(' or ');
    const wide = Array.from({ length: 120 }, (_, i) => `(a > ${i} or b < ${i})`).join(' and ');
    expect(plan(`from c where ${many}`, { target: 'ckan-2.12' }).residual).toBeUndefined(); // one field: a list
    const planned = plan(`from c where ${wide}`, { target: 'ckan-2.12' });
    expect(planned.request).toEqual({ resource_id: 'c', sort: '_id asc' });
    expect(planned.residual).toBeDefined();
  });
});

describe('plans', () => {
  it('pushes down each member of a top-level "and" that the target says, keeps the rest in source order', () => {
    const planned = plan('from c where b != 2 and a = 1 and c like "x%" order by a limit 5 offset 1 select a', { target: 'ckan-2.11' });
    // The selected fields, those the residual tests and `_id`; an order made total by `_id`, for paging.
    expect(planned.request).toEqual({ resource_id: 'c', filters: { a: 1 }, fields: ['a', 'b', 'c', '_id'], sort: 'a asc, _id asc' });
    expect(format(planned.residual!)).toBe('from c\nselect a\nwhere b != 2 and c like "x%"\nlimit 5\noffset 1');
    expect(planned.local).toEqual({ where: true, select: true, distinct: false, limit: true, order: false });
    expect(planned.maxScan).toBe(100_000);
    expect(Object.isFrozen(planned.request)).toBe(true);
  });

  it('sends the whole query when nothing is left, with limit, offset, fields and distinct (distinct only to CKAN 2.12)', () => {
    const planned = plan('from c where a = 1 select distinct a limit 5', { target: 'ckan-2.12', maxScan: 10 });
    expect(planned.residual).toBeUndefined();
    expect(planned.request).toEqual({ resource_id: 'c', filters: { a: 1 }, distinct: true, fields: ['a'], limit: 5 });
    expect(planned.local).toEqual({ where: false, select: false, distinct: false, limit: false, order: false });
    expect(planned.maxScan).toBe(10);
    // CKAN 2.10.8–2.10.10 and 2.11.3–2.11.5 apply distinct to one page: on 2.11 it runs locally over the pages.
    const on211 = plan('from c where a = 1 select distinct a limit 5', { target: 'ckan-2.11' });
    expect(on211.request).toEqual({ resource_id: 'c', filters: { a: 1 }, fields: ['a', '_id'], sort: '_id asc' });
    expect(on211.local).toEqual({ where: false, select: true, distinct: true, limit: true, order: false });
    // compile says what the request can say: distinct, as one request.
    expect(compile('from c where a = 1 select distinct a limit 5')).toEqual({ resource_id: 'c', filters: { a: 1 }, distinct: true, fields: ['a'], limit: 5 });
  });

  it('says everything for sql', () => {
    expect(plan('from c where not a != 1', { target: 'sql' }).residual).toBeUndefined();
  });
});

describe('search and sort for portals', () => {
  it('turns a word ending in * into a prefix query, the rest made safe for to_tsquery', () => {
    expect(compile('from c search "linear alg*"')).toEqual({ resource_id: 'c', q: 'linear & alg:*', plain: false });
    expect(compile(`from c search "a&b (c)! d'* e:*"`)).toEqual({ resource_id: 'c', q: 'a & b & c & d:* & e:*', plain: false });
    expect(compile('from c search "a * b"')).toEqual({ resource_id: 'c', q: 'a * b' }); // a lone * is no prefix
  });

  it('writes a per-field search as an object, with a language', () => {
    expect(compile('from c search title "alg*", `school year` "2020" language german')).toEqual({
      resource_id: 'c',
      q: { title: 'alg:*', 'school year': '2020' },
      plain: false,
      language: 'german',
    });
    expect(compile('from c search "x" language "simple"')).toEqual({ resource_id: 'c', q: 'x', language: 'simple' });
  });

  it('keeps nulls first|last in the sort text', () => {
    expect(compile('from c order by a nulls first, b desc nulls last')).toEqual({
      resource_id: 'c',
      sort: 'a asc nulls first, b desc nulls last',
    });
  });
});

describe('the sql target', () => {
  const sql = (query: string) => compile(query, { target: 'sql' }).sql;

  it('quotes identifiers with "" and literals with \'\', and keeps backslashes as they are', () => {
    expect(sql('from \'my "res"\' where `say "hi"` = "it\'s \\\\ x"')).toBe(
      `SELECT *, count(*) OVER () AS "_ckql_total" FROM "my ""res""" WHERE "say ""hi""" = 'it''s \\ x' ORDER BY "_id" LIMIT 100`,
    );
  });

  it('cannot be made to run other SQL by a value', () => {
    const text = sql(`from c where a = $x`.replace('$x', '"x\'; DROP TABLE c; --"'));
    expect(text).toContain(`"a" = 'x''; DROP TABLE c; --'`);
    expect(compile('from c where a = $x', { target: 'sql', params: { x: "'); DELETE FROM c; --" } }).sql).toContain(
      `"a" = '''); DELETE FROM c; --'`,
    );
  });

  it('refuses a NUL character', () => {
    expect(failure(() => sql('from c where a = "x\\u0000y"')).code).toBe('NUL_IN_SQL');
    expect(failure(() => sql('from c where `a\u0000` = 1')).code).toBe('NUL_IN_SQL');
  });

  it('writes in () as false and a null in a list as "is null or"', () => {
    expect(sql('from c where a in ()')).toContain('WHERE (false AND "a" IS NULL)');
    expect(sql('from c where a in (null, 1)')).toContain(`WHERE ("a" IS NULL OR "a" IN ('1'))`);
    expect(sql('from c where a != null and b > null')).toContain('WHERE ("a" IS NOT NULL AND NULL)');
  });

  it('pages, orders with _id last, and counts in the same statement; distinct in a subquery', () => {
    expect(sql('from c order by a desc nulls last limit 40000 offset 5 select a, a, b')).toBe(
      'SELECT "a", "b", count(*) OVER () AS "_ckql_total" FROM "c" ORDER BY "a" DESC NULLS LAST, "_id" LIMIT 32000 OFFSET 5',
    );
    expect(sql('from c select distinct a order by a')).toBe(
      'SELECT *, count(*) OVER () AS "_ckql_total" FROM (SELECT DISTINCT "a" FROM "c") AS "_ckql" ORDER BY "a" ASC LIMIT 100',
    );
  });

  it('searches with PostgreSQL text search, per field with to_tsvector', () => {
    // `\:`: CKAN reads the statement through SQLAlchemy's text(), where `:word` would be a parameter.
    expect(sql('from c search "linear alg*" language german')).toContain(`"_full_text" @@ to_tsquery('german', 'linear & alg\\:*')`);
    expect(sql('from c search title "x"')).toContain(`to_tsvector('english', CAST("title" AS text)) @@ plainto_tsquery('english', 'x')`);
  });
});
