import { describe, expect, it } from 'vitest';
import { linksFor, objectsJson, objectsWriter, resultJson, resultPieces } from '../../src/datastore/response.js';
import type { ResultParts } from '../../src/datastore/response.js';
import type { JsonValue, Row } from '../../src/datastore/types.js';
import { borrowPglite } from '../helpers/pglite-pool.js';

const records: Row[] = Array.from({ length: 1_234 }, (_, i) => ({ _id: i + 1, big: i === 7 ? '9007199254740993' : i, note: i % 3 === 0 ? 'a, "b"\tc' : null }));

function parts(recordsFormat: ResultParts['recordsFormat']): ResultParts {
  return {
    ckan: '2.11',
    echo: new Map<string, JsonValue>([['limit', 1_234], ['resource_id', 'r']]),
    resourceId: 'r',
    outputFields: [{ id: '_id', type: 'int' }, { id: 'big', type: 'int8' }, { id: 'note', type: 'text' }],
    records,
    recordsFormat,
    total: 5_000,
    totalWasEstimated: false,
  };
}

describe('resultPieces', () => {
  it.each(['objects', 'lists', 'csv', 'tsv'] as const)('a large page in %s comes in several pieces that join to one valid result', (format) => {
    const pieces = [...resultPieces(parts(format))];
    expect(pieces.length).toBeGreaterThan(3);
    const text = pieces.join('');
    expect(text).toBe(resultJson(parts(format)));
    const result = JSON.parse(text) as { records: unknown; total: number; fields: unknown[] };
    expect(result.total).toBe(5_000);
    expect(result.fields).toHaveLength(3);
    if (format === 'objects') expect((result.records as Row[]).map((r) => r._id)).toEqual(records.map((r) => r._id));
    else if (format === 'lists') expect((result.records as unknown[][]).map((r) => r[0])).toEqual(records.map((r) => r._id));
    else {
      const lines = (result.records as string).split('\n');
      expect(lines).toHaveLength(records.length + 1);
      expect(lines[7]).toBe(format === 'csv' ? '8,9007199254740993,' : '8\t9007199254740993\t');
    }
    // Exact digits survive the pieces (not through JSON.parse, which rounds them).
    expect(text).toContain('9007199254740993');
  });

  it('a small page is one piece', () => {
    const small = { ...parts('objects'), records: records.slice(0, 10) };
    expect([...resultPieces(small)]).toHaveLength(1);
  });
});

describe('linksFor', () => {
  // A POST's links (no query string) take a short way; the general one, over a query whose only
  // parameter is the offset it replaces, must give the same links.
  it('gives a POST the links the query-string way gives', () => {
    for (const [offset, limit] of [[0, 10], [10, 10], [25, 10], [0, 0], [1e21, 5], [7, 32_000]] as const) {
      expect(linksFor('/api/action/datastore_search', '', offset, limit)).toEqual(linksFor('/api/action/datastore_search', 'offset=3', offset, limit));
    }
    expect(linksFor('/api/3/action/datastore_search', '', 20, 10)).toEqual({
      start: '/api/3/action/datastore_search',
      next: '/api/3/action/datastore_search?offset=30',
      prev: '/api/3/action/datastore_search?offset=10',
    });
  });
});

describe('objectsWriter', () => {
  // The generated writer must write what the field-by-field writer writes, and, where every value is one
  // JSON.stringify writes as CKAN does (numbers, plain text, null), what JSON.stringify writes.
  const fields = [
    { id: '_id', type: 'int' },
    { id: 'name', type: 'text' },
    { id: 'grade', type: 'numeric' },
    { id: 'at', type: 'timestamp' },
    { id: 'big', type: 'int8' },
    { id: 'data', type: 'json' },
    { id: 'rank', type: 'float' },
    { id: 'constructor', type: 'text' },
    { id: 'a "quoted"\nname', type: 'text' },
  ] as const;
  const values: Record<string, readonly (JsonValue | undefined)[]> = {
    _id: [1, 2, 3],
    name: ['a', 'x "y"\n', '\ud800', '', '\u2028', 'é'],
    grade: [5, 7.5, -0, 1e21, null, '7.50', 'abc', NaN, Infinity],
    at: [null, '2024-01-02', '2024-01-02T03:04:05.6789', 'not a time', 5],
    big: [1, '9007199254740993', null, true],
    data: [null, { a: [1, 'b'] }, [1, 2], 'text', true, false],
    rank: [0.5, undefined, null],
    constructor: ['c', null],
    'a "quoted"\nname': ['q', 1],
  };
  const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

  it.each(['2.11', '2.12'] as const)('writes what the field-by-field writer writes (%s)', (ckan) => {
    let stringified = 0;
    for (let seed = 0; seed < 400; seed++) {
      const page: Row[] = Array.from({ length: 1 + (seed % 4) }, (_, r) => {
        const record: Record<string, JsonValue> = {};
        fields.forEach((f, k) => {
          const value = pick(values[f.id]!, seed * 7 + r * 3 + k * (seed % 5));
          // a missing key, and an own key holding undefined, both occur
          if (value !== undefined || (seed + r) % 2 === 0) record[f.id] = value as JsonValue;
        });
        return record;
      });
      const from = seed % 3 === 0 ? 1 : 0;
      const text = objectsWriter(fields, ckan)(page, Math.min(from, page.length), page.length);
      expect(text).toBe(objectsJson(fields, page, ckan, Math.min(from, page.length), page.length));
      const plain = page.every((record) => fields.every((f) => {
        const v = record[f.id];
        return Object.hasOwn(record, f.id) && (v === null || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && f.type === 'text'));
      }));
      if (plain && from === 0) {
        stringified++;
        expect(text).toBe(JSON.stringify(page.map((record) => Object.fromEntries(fields.map((f) => [f.id, record[f.id]])))));
      }
    }
    expect(stringified).toBeGreaterThan(0);
  });

  it('writes exact numbers and timestamps as CKAN does', () => {
    const typed = [{ id: 'n', type: 'numeric' }, { id: 't', type: 'timestamp' }, { id: 'r', type: 'float' }] as const;
    expect(objectsWriter(typed, '2.12')([{ n: '7.50', t: '2023-09-07' }], 0, 1)).toBe('[{"n":7.50,"t":"2023-09-07T00:00:00.000","r":0.0573088}]');
    expect(objectsWriter([], '2.11')([{ a: 1 }, { b: 2 }], 0, 2)).toBe('[{},{}]');
  });

  it("writes a float8 as PostgreSQL's JSON writes it (CKAN's records are PostgreSQL's array_to_json)", async () => {
    const numbers = [0.5, 1e-7, 1.5e-5, 0.0001, 2.5e15, 1e15 - 1, 123456789012345680000, -0, 1 / 3, -2.25e-300];
    const { pg, release } = await borrowPglite();
    let theirs: string;
    try {
      const texts = numbers.map((n) => (Object.is(n, -0) ? '-0' : String(n)));
      const sql = 'SELECT array_to_json(array_agg(j))::text AS v FROM (SELECT x::float8 AS w FROM unnest($1::text[]) WITH ORDINALITY AS u(x, o) ORDER BY o) AS j';
      theirs = (await pg.query<{ v: string }>(sql, [texts])).rows[0]!.v;
    } finally {
      await release();
    }
    const fields = [{ id: 'w', type: 'float8' }] as const;
    const page = numbers.map((w) => ({ w }));
    expect(objectsWriter(fields, '2.11')(page, 0, page.length)).toBe(theirs);
    expect(objectsJson(fields, page, '2.11', 0, page.length)).toBe(theirs);
  });
});
