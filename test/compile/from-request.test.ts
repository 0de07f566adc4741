import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromRequest } from '../../src/compile/from-request.js';
import { compile } from '../../src/compile/compile.js';
import { format } from '../../src/format.js';
import { parse } from '../../src/syntax/parse.js';
import { normalizeRequest } from '../../src/datastore/validate.js';
import { DatastoreError } from '../../src/errors.js';
import type { SearchRequest } from '../../src/datastore/types.js';
import { propertyParameters, scaledRuns } from '../helpers/arbitraries.js';

/**
 * Deep equality that also checks key order, and that a field named
 * `constructor` does not confuse (toStrictEqual compares `.constructor`).
 */
function expectSameJson(actual: unknown, expected: unknown): void {
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  expect(actual).toEqual(expected);
}

/** The normalized request without the keys the language cannot express. */
function expressible(request: unknown): SearchRequest {
  const { include_total: _dropped, ...rest } = normalizeRequest(request);
  return rest;
}

function requestError(request: unknown): DatastoreError {
  try {
    fromRequest(request);
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    return error as DatastoreError;
  }
  throw new Error(`expected ${JSON.stringify(request)} to be rejected`);
}

describe('fromRequest, hand-written requests', () => {
  const rows: [string, unknown, SearchRequest][] = [
    ['only a resource', { resource_id: 'c' }, { resource_id: 'c' }],
    ['scalar filters of every type', { resource_id: 'c', filters: { a: 'x', b: 2.5, c: true, e: 'null' } },
      { resource_id: 'c', filters: { a: 'x', b: 2.5, c: true, e: 'null' } }],
    ['list filters, one-element and empty lists', { resource_id: 'c', filters: { a: ['x', 1], b: ['y'], c: [] } },
      { resource_id: 'c', filters: { a: ['x', 1], b: ['y'], c: [] } }],
    ['a list with repeated values', { resource_id: 'c', filters: { a: ['x', 'x'] } },
      { resource_id: 'c', filters: { a: ['x', 'x'] } }],
    ['q as written', { resource_id: 'c', q: '  Linear  algebra ' }, { resource_id: 'c', q: '  Linear  algebra ' }],
    ['an all-white-space q, which is no search', { resource_id: 'c', q: ' \t ' }, { resource_id: 'c' }],
    ['empty filters, fields and sort', { resource_id: 'c', filters: {}, fields: [], sort: '' }, { resource_id: 'c' }],
    ['fields as a list', { resource_id: 'c', fields: ['b', 'a'] }, { resource_id: 'c', fields: ['b', 'a'] }],
    ['fields as a comma-separated string', { resource_id: 'c', fields: 'b, a ,c' }, { resource_id: 'c', fields: ['b', 'a', 'c'] }],
    ['sort as a string', { resource_id: 'c', sort: 'a desc, b' }, { resource_id: 'c', sort: 'a desc, b asc' }],
    ['sort as a list, any case', { resource_id: 'c', sort: ['a DESC', 'b Asc', 'c'] }, { resource_id: 'c', sort: 'a desc, b asc, c asc' }],
    ['sort on quoted names', { resource_id: 'c', sort: '"school year" desc, "say ""hi""", "a,b" asc' },
      { resource_id: 'c', sort: '"school year" desc, "say ""hi""" asc, "a,b" asc' }],
    ['sort on an unquoted name with a space', { resource_id: 'c', sort: ['school year desc'] }, { resource_id: 'c', sort: '"school year" desc' }],
    ['limit and offset', { resource_id: 'c', limit: 10, offset: 0 }, { resource_id: 'c', limit: 10, offset: 0 }],
    ['limit and offset as numeric strings', { resource_id: 'c', limit: '10', offset: '5' }, { resource_id: 'c', limit: 10, offset: 5 }],
    ['include_total: true, the default', { resource_id: 'c', include_total: true }, { resource_id: 'c' }],
    ['everything', {
      include_total: true, offset: 3, limit: 2, sort: 'year desc', fields: ['title', 'year'], q: 'x',
      filters: { stage: ['active', 'survey'], year: 2020 }, resource_id: 'r',
    }, {
      resource_id: 'r', filters: { stage: ['active', 'survey'], year: 2020 }, q: 'x', fields: ['title', 'year'],
      sort: 'year desc', limit: 2, offset: 3,
    }],
  ];
  it.each(rows)('%s', (_title, request, expected) => {
    const compiled = compile(fromRequest(request));
    expect(compiled).toStrictEqual(expected);
    expect(compiled).toStrictEqual(expressible(request));
    expect(Object.keys(compiled)).toEqual(Object.keys(expected));
  });

  it('reads as the query a person would write', () => {
    const query = fromRequest({
      resource_id: 'courses', filters: { stage: ['active', 'survey'], year: 2020, 'school year': [] },
      sort: ['year desc', 'title'], fields: 'title, year', q: 'linear algebra', limit: '10', offset: 20,
    });
    expect(format(query)).toBe([
      'from courses',
      'select title, year',
      'where stage in (active, survey) and year = 2020 and `school year` in ()',
      'search "linear algebra"',
      'order by year desc, title',
      'limit 10',
      'offset 20',
    ].join('\n'));
  });

  it('builds the AST of that query', () => {
    const query = fromRequest({ resource_id: 'c', filters: { a: 1, b: [] }, sort: 'a desc', limit: 5 });
    expect(query.from.resource).toMatchObject({ kind: 'string', value: 'c' });
    expect(query.where?.condition).toMatchObject({
      kind: 'and',
      conditions: [
        { kind: 'eq', field: { name: 'a' }, value: { kind: 'number', value: 1 } },
        { kind: 'in', field: { name: 'b' }, values: [] },
      ],
    });
    expect(query.order?.keys).toMatchObject([{ field: { name: 'a' }, direction: 'desc' }]);
    expect(query.limit?.value).toMatchObject({ kind: 'number', value: 5 });
    expect(query.search).toBeUndefined();
    expect(query.select).toBeUndefined();
    expect(query.offset).toBeUndefined();
  });

  it('writes one filter as the where condition itself, not an and of one', () => {
    expect(fromRequest({ resource_id: 'c', filters: { a: 1 } }).where?.condition.kind).toBe('eq');
  });

  it('gives every node the zero-width span at 0', () => {
    const query = fromRequest({ resource_id: 'c', filters: { a: [1] }, q: 'x', fields: ['a'], sort: 'a', limit: 1, offset: 1 });
    const spans: unknown[] = [];
    JSON.stringify(query, (key, value: unknown) => {
      if (key === 'span') spans.push(value);
      return value;
    });
    expect(spans.length).toBeGreaterThan(10);
    for (const span of spans) expect(span).toEqual({ start: 0, end: 0 });
  });

  it('keeps a filter on a field named __proto__', () => {
    const request = JSON.parse('{"resource_id": "c", "filters": {"__proto__": 1}}') as unknown;
    expect(JSON.stringify(compile(fromRequest(request)))).toBe('{"resource_id":"c","filters":{"__proto__":1}}');
  });
});

describe('fromRequest, invalid requests', () => {
  const rows: [string, unknown, string][] = [
    ['not an object', 'resource_id=c', 'BAD_REQUEST'],
    ['an array', [{ resource_id: 'c' }], 'BAD_REQUEST'],
    ['null', null, 'BAD_REQUEST'],
    ['no resource_id', { filters: {} }, 'VALIDATION_ERROR'],
    ['an empty resource_id', { resource_id: '' }, 'VALIDATION_ERROR'],
    ['a filter operator no version has', { resource_id: 'c', filters: { a: { ne: 1 } } }, 'VALIDATION_ERROR'],
    ['a $-key no version has', { resource_id: 'c', filters: { $not: [{ a: 1 }] } }, 'VALIDATION_ERROR'],
    ['filters that are a list', { resource_id: 'c', filters: [1] }, 'VALIDATION_ERROR'],
    ['an unknown key', { resource_id: 'c', frobnicate: true }, 'VALIDATION_ERROR'],
    ['a negative limit', { resource_id: 'c', limit: -1 }, 'VALIDATION_ERROR'],
    ['a fractional offset', { resource_id: 'c', offset: 1.5 }, 'VALIDATION_ERROR'],
    ['a text limit', { resource_id: 'c', limit: 'ten' }, 'VALIDATION_ERROR'],
    ['fields that are a number', { resource_id: 'c', fields: 5 }, 'VALIDATION_ERROR'],
    ['a plain q with a word ending in * (a query would make it a prefix search)', { resource_id: 'c', q: 'Ⰰ*' }, 'VALIDATION_ERROR'],
  ];
  it.each(rows)('%s', (_title, request, code) => {
    const error = requestError(request);
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(5);
  });

  it('names the parameter as the server does', () => {
    expect(requestError({ resource_id: 'c', frobnicate: true }).body).toMatchObject({ __type: 'Validation Error', __extras: [expect.any(String)] });
    // neither 2.11 nor 2.12 reads `ne`: the filters are refused
    expect(JSON.stringify(requestError({ resource_id: 'c', filters: { a: { ne: 1 } } }).body)).toMatch(/Validation Error.*ne|ne.*Validation Error/);
    expect(requestError({}).body).toMatchObject({ resource_id: [expect.any(String)] });
  });

  it('rejects include_total: false, which the language cannot say', () => {
    const error = requestError({ resource_id: 'c', include_total: false });
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.body).toMatchObject({ include_total: [expect.stringContaining('include_total: false')] });
  });

  it('rejects an empty field name, which the language cannot write', () => {
    expect(requestError({ resource_id: 'c', filters: { '': 1 } }).body).toMatchObject({ filters: [expect.any(String)] });
    expect(requestError({ resource_id: 'c', fields: [''] }).body).toMatchObject({ fields: [expect.any(String)] });
  });
});

// ---------------------------------------------------------------- generated requests

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '_', ' ', '-', '"', ',', '`', '$', '(', 'é', '日', '\n', '1'), maxLength: 8 });
const name = fc.oneof(
  fc.constantFrom('a', 'b', 'stage', 'year', '_id', 'school year', 'a,b', 'say "hi"', 'bük', '__proto__', 'constructor', 'in', 'from', 'null'),
  text.filter((s) => s !== ''),
);
const scalar = fc.oneof(
  text,
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  // No null: `filters: {f: null}` reads back as `f = null`, which means `f is null` and is no longer
  // sent as a portal filter (docs/beyond-the-request.md); see 'a null filter' below.
  fc.constantFrom('null', 'true', '1', '1.0', ''),
);
const filterValue = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }));
const direction = fc.constantFrom('', ' asc', ' desc', ' DESC', ' Asc');

/** A sort item as CKAN accepts it: a plain name, or a double-quoted one. */
const sortItem = fc.tuple(name, direction, fc.boolean()).map(([field, dir, quote]) =>
  quote || !/^[A-Za-z_][A-Za-z0-9_ ]*$/.test(field) || field.trim() !== field
    ? `"${field.replaceAll('"', '""')}"${dir}`
    : `${field}${dir}`,
);

const request = fc.record(
  {
    resource_id: fc.oneof(fc.uuid(), text.filter((s) => s !== '')),
    filters: fc.dictionary(name, filterValue, { maxKeys: 4 }),
    q: text,
    fields: fc.oneof(
      fc.array(name, { minLength: 1, maxLength: 4 }),
      fc.array(fc.constantFrom('a', 'b', 'title', 'year'), { minLength: 1, maxLength: 4 }).map((names) => names.join(', ')),
    ),
    sort: fc.oneof(
      fc.array(sortItem, { minLength: 1, maxLength: 3 }),
      fc.array(sortItem, { minLength: 1, maxLength: 3 }).map((items) => items.join(', ')),
    ),
    limit: fc.oneof(fc.nat({ max: 100_000 }), fc.nat({ max: 500 }).map(String)),
    offset: fc.nat({ max: 100_000 }),
    include_total: fc.constant(true),
  },
  { requiredKeys: ['resource_id'] },
);

describe('fromRequest, generated requests', () => {
  it('compile(fromRequest(r)) equals the normalized r', () => {
    fc.assert(
      fc.property(request, (r) => {
        expectSameJson(compile(fromRequest(r)), expressible(r));
      }),
      propertyParameters(scaledRuns(2000)),
    );
  });

  it('compile(fromRequest(c)) is c itself for a canonical request c', () => {
    fc.assert(
      fc.property(request, (r) => {
        const canonical = expressible(r);
        expectSameJson(compile(fromRequest(canonical)), canonical);
      }),
      propertyParameters(scaledRuns(500)),
    );
  });

  it('gives a query that reads back from its text: compile(parse(format(fromRequest(r)))) equals the normalized r', () => {
    fc.assert(
      fc.property(request, (r) => {
        expectSameJson(compile(parse(format(fromRequest(r)))), expressible(r));
      }),
      propertyParameters(scaledRuns(1000)),
    );
  });
});

describe('a null filter', () => {
  it('reads back as "is null", which a portal target cannot send, so compile refuses it and sql says it', () => {
    const query = fromRequest({ resource_id: 'c', filters: { d: null } });
    expect(format(query)).toBe('from c\nwhere d = null');
    expect(() => compile(query)).toThrow(expect.objectContaining({ code: 'TARGET_CANNOT_EXPRESS' }));
    expect(compile(query, { target: 'sql' }).sql).toContain('WHERE "d" IS NULL');
  });
});

describe('CKAN 2.12 requests', () => {
  const text = (request: unknown) => format(fromRequest(request));

  it('reads operators, mixed lists, $or and $and, and compiles back to the same meaning for 2.12', () => {
    const request = { resource_id: 'c', filters: { incident: 'noise', $or: [{ resolution: ['open', 'in progress'] }, { year: { gt: 2024 } }] } };
    expect(text(request)).toBe('from c\nwhere incident = noise and (resolution in (open, "in progress") or year > 2024)');
    expect(compile(fromRequest(request), { target: 'ckan-2.12' })).toEqual(request);
    expect(text({ resource_id: 'c', filters: { year: [2005, { gte: 2010, lte: 2019 }] } })).toBe(
      'from c\nwhere ((year >= 2010 and year <= 2019) or year in (2005))',
    );
    expect(text({ resource_id: 'c', filters: [{ a: 1 }, { b: { lt: 2 } }] })).toBe('from c\nwhere (a = 1 or b < 2)');
    expect(text({ resource_id: 'c', filters: { $$AUD: { gte: 100 } } })).toBe('from c\nwhere `$AUD` >= 100');
  });

  it('keeps what 2.12 means by null: nothing matches it', () => {
    expect(text({ resource_id: 'c', filters: { a: { gt: null }, b: [null, 5] } })).toBe('from c\nwhere a in () and b in (5)');
  });

  it('reads per-field search, prefix words, language, distinct and nulls last', () => {
    const request = { resource_id: 'c', q: { title: 'linear & alg:*' }, plain: false, language: 'german', fields: ['a'], distinct: true, sort: 'a desc nulls last' };
    expect(text(request)).toBe('from c\nselect distinct a\nsearch title "linear alg*" language german\norder by a desc nulls last');
    expect(compile(fromRequest(request))).toEqual(request);
  });

  it('says exactly which part it cannot write yet', () => {
    const cannot = (request: unknown, key: string) => {
      const error = requestError(request);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(error.body as object)).toContain(key);
    };
    cannot({ resource_id: 'c', include_next_page: true }, 'include_next_page');
    cannot({ resource_id: 'c', records_format: 'csv' }, 'records_format');
    cannot({ resource_id: 'c', q: 'a | b', plain: false }, 'q');
    cannot({ resource_id: 'c', distinct: true }, 'distinct');
    cannot({ resource_id: 'c', language: 'german' }, 'language');
  });
});
