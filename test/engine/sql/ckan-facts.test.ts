/**
 * The CKAN facts of docs/ckan-2.11-reference.md (verified there on
 * PostgreSQL 15 against CKAN's own fixtures) as cases on both PostgreSQL
 * engines: full-text search, filters cast by PostgreSQL, nulls, order,
 * errors, and 2.12's filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatastoreError } from '../../../src/errors.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';

// CKAN's books fixture (test_search.py), as the reference's full-text table uses it.
const books = typedTable(
  'books',
  [['book', 'text'], ['author', 'text'], ['published', 'timestamp'], ['characters', '_text'], ['rating with %', 'text'], ['nested', 'json']],
  [
    { book: 'annakarenina', author: 'tolstoy', published: '2005-03-01', characters: ['Princess Anna', 'Sergius'], 'rating with %': '60%', nested: ['b', { moo: 'moo' }] },
    { book: 'warandpeace', author: 'tolstoy', published: null, characters: null, 'rating with %': '99%', nested: { a: 'b' } },
  ],
);

// Values of each type, for casts, nulls and order.
const things = typedTable(
  'things',
  [['name', 'text'], ['n', 'int4'], ['price', 'numeric'], ['ok', 'bool'], ['day', 'date'], ['at', 'timestamp'], ['tags', '_text']],
  [
    { name: 'a', n: 10, price: 7.5, ok: true, day: '2020-01-02', at: '2020-01-01T00:00:00', tags: ['x'] },
    { name: 'B', n: 2, price: 2, ok: false, day: '2021-06-30', at: '2020-01-02T12:30:00', tags: [] },
    { name: 'None', n: null, price: null, ok: null, day: null, at: null, tags: null },
    { name: '_', n: 25, price: 10.25, ok: true, day: '2019-12-31', at: '2021-01-01T00:00:00', tags: ['x', 'y'] },
    { name: '25', n: 7, price: 0.5, ok: false, day: '2020-01-01', at: '2019-05-05T05:05:05', tags: null },
    { name: null, n: 1, price: 1, ok: true, day: '2022-02-02', at: null, tags: null },
    { name: 'Z', n: 3, price: 3, ok: false, day: '2020-03-03', at: '2020-03-03T00:00:00', tags: null },
  ],
);

const ids = (result: { records: readonly unknown[] }): number[] => (result.records as { _id: number }[]).map((r) => r._id);

async function errorOf(promise: Promise<unknown>): Promise<DatastoreError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DatastoreError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([books, things]);
});
afterAll(async () => {
  await engines?.close();
});

describe.each(engineNames)('%s answers as CKAN 2.11.5', (name) => {
  const search = (request: Record<string, unknown>, options = {}) => engines.get(name).search(request, options);
  const q = async (text: string, extra: Record<string, unknown> = {}): Promise<number[]> =>
    ids(await search({ resource_id: 'books', q: text, sort: '_id', ...extra }));

  it.each([
    ['annakarenina', [1]],
    ['AnnaKarenina', [1]],
    ['anna', [1]], // from the characters array "Princess Anna"
    ['karenina', []],
    ['war', []],
    ['tolst', []],
    ['tolstoy', [1, 2]],
    ['Tolstoy!', [1, 2]],
    ['the tolstoy', [1, 2]],
    ['tolstoy annakarenina', [1]], // AND of the words
    ['tolstoy OR annakarenina', [1]], // "or" is a stop word
    ['warandpeace', [2]],
    ['princesses', [1]], // stemmed on both sides
    ['60%', [1]],
    ['99', [2]],
    ['-01', [1]], // 2005-03-01 is 2005, -03, -01
    ['01', []],
    ['2005-03-01', [1]],
    ['json', [1, 2]], // the nested composite's keys are indexed
    ['null', [1, 2]],
    ['the', []], // no lexemes: nothing
    ['!!!', []],
  ] as const)('q %j finds %j', async (text, expected) => {
    expect(await q(text)).toEqual(expected);
  });

  it.each([
    ['anna:*', [1]],
    ['ann:*', [1]],
    ['tolst:*', [1, 2]],
    ['war:*', [2]],
    ['tolstoy & !annakarenina', [2]],
    ['princess <-> anna', [1]],
  ] as const)('plain: false, q %j finds %j', async (text, expected) => {
    expect(await q(text, { plain: false })).toEqual(expected);
  });

  it('plain: false with two bare words is a tsquery syntax error: 409 Invalid query', async () => {
    const error = await errorOf(search({ resource_id: 'books', q: 'tolstoy annakarenina', plain: false }));
    expect(error.status).toBe(409);
    expect(error.body).toMatchObject({ __type: 'Validation Error', query: ['Invalid query'] });
    expect(JSON.stringify((error.body as unknown as { info: unknown }).info)).toContain('syntax error in tsquery');
  });

  it('language applies to the query only: simple does not stem, so warandpeace no longer matches', async () => {
    expect(await q('warandpeace', { language: 'simple' })).toEqual([]);
    expect(await q('tolstoy', { language: 'simple' })).toEqual([1, 2]);
  });

  it('an unknown language is 409 Invalid query', async () => {
    const error = await errorOf(search({ resource_id: 'books', q: 'x', language: 'klingon' }));
    expect(error.body).toMatchObject({ query: ['Invalid query'] });
  });

  it('per-field q matches whole words of that field only, with a rank column per field', async () => {
    const result = await search({ resource_id: 'books', q: { book: 'annakarenina' } });
    expect(ids(result)).toEqual([1]);
    expect(result.fields.at(-1)).toEqual({ id: 'rank book', type: 'float' });
    expect(ids(await search({ resource_id: 'books', q: { book: 'anna' } }))).toEqual([]);
    expect(ids(await search({ resource_id: 'books', q: '{"author": "tolstoy"}', sort: '_id' }))).toEqual([1, 2]);
  });

  it('q adds rank (ts_rank normalised by 32) to records and fields and orders by it', async () => {
    const result = await search({ resource_id: 'books', q: 'anna' });
    const record = result.records[0] as Record<string, number>;
    expect(record['rank']).toBeCloseTo(0.0573088, 6);
    expect(result.fields.at(-1)).toEqual({ id: 'rank', type: 'float' });
    const ranked = await search({ resource_id: 'books', q: 'tolstoy', fields: ['book', 'rank'] });
    const ranks = (ranked.records as { rank: number }[]).map((r) => r.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
  });

  it('rank is not a sort field', async () => {
    const error = await errorOf(search({ resource_id: 'books', q: 'tolstoy', sort: 'rank desc' }));
    expect(error.body).toEqual({ __type: 'Validation Error', sort: ['invalid value "rank desc"'] });
  });

  it('records: timestamps without zone, arrays and json as JSON, numeric as numbers', async () => {
    const result = await search({ resource_id: 'books', limit: 1 });
    expect(result.records[0]).toEqual({
      _id: 1, book: 'annakarenina', author: 'tolstoy', published: '2005-03-01T00:00:00', characters: ['Princess Anna', 'Sergius'],
      'rating with %': '60%', nested: ['b', { moo: 'moo' }],
    });
    expect(result.fields.map((f) => f.type)).toEqual(['int', 'text', 'text', 'timestamp', '_text', 'text', 'json']);
  });

  // Filters: CKAN binds the value and PostgreSQL casts it (docs/ckan-2.11-reference.md §2).
  const byFilter = async (filters: Record<string, unknown>): Promise<number[]> => ids(await search({ resource_id: 'things', filters }));
  it.each([
    [{ price: '7.50' }, [1]],
    [{ price: 7.5 }, [1]],
    [{ price: '2.00' }, [2]],
    [{ n: '10' }, [1]],
    [{ n: 10.5 }, []],
    [{ ok: 't' }, [1, 4, 6]],
    [{ ok: 'no' }, [2, 5, 7]],
    [{ day: '01/02/2020' }, [1]], // DateStyle MDY
    [{ at: '2020-01-01' }, [1]],
    [{ at: '2020-01-02' }, []],
    [{ name: 25 }, [5]], // str(25) on a text column
    [{ name: null }, [3]], // str(None): the text "None", not NULL
    [{ n: null }, []],
    [{ n: [10, null] }, [1]],
    [{ name: ['a', 'B'] }, [1, 2]],
    [{ tags: ['x', 'y'] }, [4]], // a list on an array column is the whole array (2.11)
    [{ tags: '{}' }, [2]],
    [{ _id: '3' }, [3]],
  ] as const)('filters %j match %j', async (filters, expected) => {
    expect(await byFilter(filters)).toEqual(expected);
  });

  it.each([
    [{ n: 'abc' }, 'invalid input syntax for type integer'],
    [{ n: '10.0' }, 'invalid input syntax for type integer'],
    [{ n: true }, 'operator does not exist: integer = boolean'],
    [{ at: 5 }, 'operator does not exist'],
    [{ tags: 'a' }, 'malformed array literal'],
    [{ n: [] }, 'syntax error'], // `in ()`
    [{ n: { gt: 5 } }, "can't adapt type 'dict'"], // 2.11 has no operators
  ] as const)('filters %j are 409 Invalid query (%s)', async (filters, orig) => {
    const error = await errorOf(search({ resource_id: 'things', filters }));
    expect(error.status).toBe(409);
    expect(error.body).toMatchObject({ __type: 'Validation Error', query: ['Invalid query'] });
    expect((error.body as unknown as { info: { orig: string[] } }).info.orig[0]).toContain(orig);
  });

  it('an unknown filter field is 409 invalid value', async () => {
    const error = await errorOf(search({ resource_id: 'things', filters: { nope: 1 } }));
    expect(error.body).toEqual({ __type: 'Validation Error', filters: ['invalid value "nope"'] });
  });

  it('text sorts by the database collation (C: byte order), nulls last ascending and first descending', async () => {
    const names = async (sort: string): Promise<unknown[]> =>
      ((await search({ resource_id: 'things', sort, fields: ['name'] })).records as { name: unknown }[]).map((r) => r.name);
    expect(await names('name')).toEqual(['25', 'B', 'None', 'Z', '_', 'a', null]);
    expect(await names('name desc')).toEqual([null, 'a', '_', 'Z', 'None', 'B', '25']);
    expect(await names('name asc nulls first')).toEqual([null, '25', 'B', 'None', 'Z', '_', 'a']);
  });

  it('limit is capped silently, offset pages, total ignores both', async () => {
    const result = await search({ resource_id: 'things', limit: 50, offset: 5 }, { maxLimit: 3 });
    expect(result.limit).toBe(3);
    expect(ids(result)).toEqual([6, 7]);
    expect(result.total).toBe(7);
  });

  it('records_format lists, csv and tsv', async () => {
    const lists = await search({ resource_id: 'things', records_format: 'lists', fields: 'name,ok', limit: 2 });
    expect(lists.records).toEqual([['a', true], ['B', false]]);
    const csv = await search({ resource_id: 'things', records_format: 'csv', fields: ['name', 'price', 'ok', 'at'], limit: 3 });
    expect(csv.records).toBe('a,7.5,t,2020-01-01T00:00:00\nB,2,f,2020-01-02T12:30:00\nNone,,,\n');
    const tsv = await search({ resource_id: 'books', records_format: 'tsv', fields: ['book', 'characters'], limit: 1 });
    expect(tsv.records).toBe('annakarenina\t"[""Princess Anna"",""Sergius""]"\n');
  });

  it('distinct counts distinct rows; include_total: false leaves total out', async () => {
    const result = await search({ resource_id: 'things', distinct: true, fields: ['ok'], sort: 'ok' });
    expect(result.records).toEqual([{ ok: false }, { ok: true }, { ok: null }]);
    expect(result.total).toBe(3);
    expect('total' in (await search({ resource_id: 'things', include_total: false }))).toBe(false);
  });

  it('errors: unknown resource 404, unknown key and bad limit 409 with CKAN messages', async () => {
    expect((await errorOf(search({ resource_id: 'nope' }))).body).toEqual({ __type: 'Not Found Error', message: 'Not found: Resource "nope" was not found.' });
    expect((await errorOf(search({ resource_id: 'things', foo: 1 }))).body).toEqual({ __type: 'Validation Error', __extras: ['invalid value "foo"'] });
    expect((await errorOf(search({ resource_id: 'things', limit: -1 }))).body).toEqual({ __type: 'Validation Error', limit: ['Must be a natural number'] });
    expect((await errorOf(search({ resource_id: 'things', fields: ['name', 'x'], sort: 'y' }))).body).toEqual({ __type: 'Validation Error', fields: ['invalid value "x"'] });
  });

  it('total_estimation_threshold: without filters the total is pg_class.reltuples once it reaches the threshold', async () => {
    const estimated = await search({ resource_id: 'things', limit: 1, total_estimation_threshold: 5 });
    expect([estimated.total, estimated.total_was_estimated]).toEqual([7, true]);
    const exact = await search({ resource_id: 'things', limit: 1, total_estimation_threshold: 100 });
    expect([exact.total, exact.total_was_estimated]).toEqual([7, false]);
    const filtered = await search({ resource_id: 'things', filters: { ok: true }, total_estimation_threshold: 1 });
    expect([filtered.total, filtered.total_was_estimated]).toEqual([3, false]);
  });

  it('an alias resolves to the resource, whose id the result carries', async () => {
    const result = await search({ resource_id: 'things', limit: 0 });
    expect(result.resource_id).toBe(things.id);
    expect(result.records).toEqual([]);
    expect(result.total).toBe(7);
  });

  describe('2.12', () => {
    const s212 = (filters: unknown, extra: Record<string, unknown> = {}) => search({ resource_id: 'things', filters, ...extra }, { ckan: '2.12' });
    it.each([
      [{ n: { gt: 5, lt: 11 } }, [1, 5]],
      [{ n: [{ lte: 1 }, 7, { gte: 25 }] }, [4, 5, 6]],
      [[{ name: 'a' }, { n: 2 }], [1, 2]],
      [{ ok: true, $or: [{ name: 'a' }, { _id: { gt: 5 } }] }, [1, 6]],
      [{ n: [] }, []],
      [{ name: { gt: 'Z' } }, [1, 4]],
    ] as const)('filters %j match %j', async (filters, expected) => {
      expect(ids(await s212(filters))).toEqual(expected);
    });

    it('unknown fields are reported together; timestamps carry milliseconds; next_page is the keyset cursor', async () => {
      expect((await errorOf(s212({ a: 1, b: 2 }))).body).toEqual({ __type: 'Validation Error', filters: ['Unknown field: a', 'Unknown field: b'] });
      const page = await s212(undefined, { fields: ['at'], limit: 2, include_next_page: true });
      expect(page.records).toEqual([{ at: '2020-01-01T00:00:00.000' }, { at: '2020-01-02T12:30:00.000' }]);
      expect((page as unknown as { next_page: unknown }).next_page).toEqual({ _id: { gt: 2 } });
    });
  });
});
