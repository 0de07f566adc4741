import { describe, expect, it } from 'vitest';
import { linksFor, resultJson, resultPieces } from '../../src/datastore/response.js';
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
