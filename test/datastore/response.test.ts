import { describe, expect, it } from 'vitest';
import { linksFor, recordsArePlain, resultJson, resultPieces } from '../../src/datastore/response.js';
import type { ResultParts } from '../../src/datastore/response.js';
import type { JsonValue, Row } from '../../src/datastore/types.js';

const records: Row[] = Array.from({ length: 1_234 }, (_, i) => ({ _id: i + 1, big: i === 7 ? '9007199254740993' : i, note: i % 3 === 0 ? 'a, "b"\tc' : null }));

function parts(recordsFormat: ResultParts['recordsFormat'], plain: boolean): ResultParts {
  return {
    ckan: '2.11',
    echo: new Map<string, JsonValue>([['limit', 1_234], ['resource_id', 'r']]),
    resourceId: 'r',
    outputFields: [{ id: '_id', type: 'int' }, { id: 'big', type: 'int8' }, { id: 'note', type: 'text' }],
    records,
    recordsFormat,
    total: 5_000,
    totalWasEstimated: false,
    plain,
  };
}

describe('resultPieces', () => {
  it.each([
    ['objects', true],
    ['objects', false],
    ['lists', false],
    ['csv', false],
    ['tsv', false],
  ] as const)('a large page in %s (plain: %s) comes in several pieces that join to one valid result', (format, plain) => {
    const pieces = [...resultPieces(parts(format, plain))];
    expect(pieces.length).toBeGreaterThan(3);
    const text = pieces.join('');
    expect(text).toBe(resultJson(parts(format, plain)));
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
    if (!plain) expect(text).toContain('9007199254740993');
  });

  it('a small page is one piece', () => {
    const small = { ...parts('objects', true), records: records.slice(0, 10) };
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

describe('recordsArePlain', () => {
  // When it says yes, one JSON.stringify of the records must write what the field-by-field writer writes.
  const fields = [
    { id: '_id', type: 'int' },
    { id: 'name', type: 'text' },
    { id: 'grade', type: 'numeric' },
    { id: 'at', type: 'timestamp' },
    { id: 'big', type: 'int8' },
    { id: 'data', type: 'json' },
  ] as const;
  const values: Record<string, readonly JsonValue[]> = {
    _id: [1, 2, 3],
    name: ['a', 'x "y"\n', '\ud800', ''],
    grade: [5, 7.5, -0, 1e21, null, '7.50'],
    at: [null, '2024-01-02', '2024-01-02T03:04:05.6789'],
    big: [1, '9007199254740993', null],
    data: [null, { a: [1, 'b'] }, [1, 2], 'text', true],
  };
  const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

  it('agrees with the field-by-field writer whenever it says yes, and says yes for typed numbers', () => {
    let plainPages = 0;
    for (let seed = 0; seed < 400; seed++) {
      const records: Row[] = Array.from({ length: 1 + (seed % 4) }, (_, r) => {
        const record: Record<string, JsonValue> = {};
        fields.forEach((f, k) => {
          record[f.id] = pick(values[f.id]!, seed * 7 + r * 3 + k * (seed % 5));
        });
        return record;
      });
      // some pages lose a key, or get one too many, or in another order
      if (seed % 11 === 0) delete (records[0] as Record<string, JsonValue>).name;
      if (seed % 13 === 0) (records[0] as Record<string, JsonValue>).extra = 1;
      const page = seed % 17 === 0 ? records.map((r) => Object.fromEntries(Object.entries(r).reverse())) : records;
      const base = { ...parts('objects', false), outputFields: fields, records: page };
      if (!recordsArePlain(page, fields)) continue;
      plainPages++;
      expect(resultJson({ ...base, plain: true })).toBe(resultJson(base));
    }
    expect(plainPages).toBeGreaterThan(20);
    expect(recordsArePlain([{ _id: 1, grade: 5 }], [{ id: '_id', type: 'int' }, { id: 'grade', type: 'numeric' }])).toBe(true);
    expect(recordsArePlain([{ _id: 1, grade: '5.0' }], [{ id: '_id', type: 'int' }, { id: 'grade', type: 'numeric' }])).toBe(false);
    expect(recordsArePlain([{ grade: 5, _id: 1 }], [{ id: '_id', type: 'int' }, { id: 'grade', type: 'numeric' }])).toBe(false);
    expect(recordsArePlain([{ _id: 1 }], [{ id: '_id', type: 'int' }, { id: 'grade', type: 'numeric' }])).toBe(false);
    expect(recordsArePlain([{ _id: 1, grade: undefined }] as unknown as Row[], [{ id: '_id', type: 'int' }, { id: 'grade', type: 'numeric' }])).toBe(false);
  });
});
