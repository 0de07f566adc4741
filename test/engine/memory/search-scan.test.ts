/**
 * The first `q` on a table tests the values (search-scan.ts); the second
 * builds the search text (source.ts). Both must find the same rows.
 */
import { describe, expect, test } from 'vitest';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { valueContains } from '../../../src/engine/memory/search-scan.js';
import { prepareSource } from '../../../src/engine/memory/source.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import type { SearchResult } from '../../../src/datastore/types.js';

const ids = (result: SearchResult): unknown[] => result.records.map((r) => r._id);

describe('valueContains: the text search rule for one value', () => {
  test.each([
    ['Linear Algebra', 'algebra', true],
    ['LINEAR', 'linear', true],
    ['Ｃｈｅｍ-203', 'chem-2', true], // full-width letters fold under NFKC
    ['ﬁle', 'file', true], // the ligature unfolds, so a shorter text can hold a longer q
    ['Straße', 'straße', true],
    [2.5, '2.5', true],
    [2.5, '2.50', false],
    [1e21, '1e+21', true],
    [-Infinity, '-infinity', true],
    [Number.NaN, 'nan', true],
    [-5, '-5', true],
    [2024, 'love', false],
    [true, 'tru', true],
    [{ a: 'X' }, '"a":"x"', true],
    ['abc', 'abcd', false],
    [null, 'null', false],
    [undefined, 'u', false],
  ])('%j contains %j: %s', (value, q, expected) => {
    expect(valueContains(value, q)).toBe(expected);
  });
});

describe('first q scans, second q uses the search text', () => {
  // ids unique per row (the scan drops its memo for them), codes and years that repeat
  const rows = Array.from({ length: 6000 }, (_, i) => ({
    id: `S-${String(i).padStart(6, '0')}`,
    course: ['CHEM-203', 'Chem-110', 'BIOL-103', 'ｃｈｅｍ-299', null][i % 5],
    year: 2000 + (i % 30),
    note: i % 97 === 0 ? 'see CHEM-2 notes' : '',
  }));
  const naive = (q: string): number[] =>
    rows.flatMap((row, i) =>
      Object.values(row).some((v) => v !== null && String(v).normalize('NFKC').toLowerCase().includes(q)) ? [i + 1] : []);

  test.each(['chem-2', 's-0059', '2029', 'see'])('%j: the same rows from the scan and from the search text', (q) => {
    const table = tableFromRows(rows, { alias: 'enrolments' });
    const request = { resource_id: 'enrolments', q, limit: 32000 };
    const first = evaluate(request, table);
    expect(prepareSource(table).search).toBeUndefined();
    const second = evaluate(request, table);
    expect(prepareSource(table).search).toBeDefined();
    expect(ids(first)).toEqual(naive(q));
    expect(second).toEqual(first);
  });

  test('a first q after filters tests only the filtered rows', () => {
    const table = tableFromRows(rows, { alias: 'enrolments' });
    const result = evaluate({ resource_id: 'enrolments', filters: { year: [2003, 2008] }, q: 'chem-2', limit: 32000 }, table);
    expect(ids(result)).toEqual(naive('chem-2').filter((id) => [2003, 2008].includes(2000 + ((id - 1) % 30))));
    expect(result.total).toBeGreaterThan(0);
  });
});
