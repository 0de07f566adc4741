/**
 * Text search: the `to_tsquery` subset of `plain: false`, its clear refusals,
 * the per-table search text (right for rows past one chunk and for data
 * holding the row separator).
 */
import { describe, expect, test } from 'vitest';
import type { Row } from '../../../src/datastore/types.js';
import { DatastoreError } from '../../../src/errors.js';
import { runSteps } from '../../../src/engine/pace.js';
import { emptySearchText, parseTsQuery, rowSearchText, searchChunks, searchRows, textQuery, tsQueryMatches } from '../../../src/engine/memory/text-search.js';
import { completeFields, tableView } from '../../../src/engine/memory/table-view.js';

describe('plain: false', () => {
  test.each<[string, string, boolean]>([
    ['algebra:*', 'linear algebra', true],
    ['alg:* & lin:*', 'linear algebra', true],
    ['alg:* & !lin:*', 'linear algebra', false],
    ['geo | alg', 'linear algebra', true],
    ['!(geo | chem)', 'linear algebra', true],
    ['(geo | alg) & !(chem)', 'chemistry', false],
    ['ALGEBRA', 'linear algebra', true],
  ])('%s on %j: %s', (query, text, expected) => {
    expect(tsQueryMatches(parseTsQuery(query), text)).toBe(expected);
  });

  test.each(['a <-> b', 'a:A', "'quoted'", 'linear algebra', 'a &', '(a', 'a)'])('%j is refused with what is supported', (query) => {
    let error: unknown;
    try {
      parseTsQuery(query);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DatastoreError);
    const body = (error as DatastoreError).body as unknown as { q: string[] };
    expect(body.q[0]).toMatch(/^cannot read .* as a text search query near .*: the memory engine supports words, prefix words \(word:\*\), &, \|, ! and parentheses$/);
  });

  test('an empty plain text asks nothing', () => {
    expect(textQuery('  \n ', true)).toBeUndefined();
    expect(textQuery(' Linear   ALGEBRA ', true)).toEqual({ kind: 'term', text: 'linear algebra' });
  });
});

describe('the search text', () => {
  test('rows past one chunk, rows holding the separator, and the sweep agree with a naive test', () => {
    const rows: Row[] = Array.from({ length: 20_000 }, (_, i) => ({
      t: i % 1000 === 7 ? 'Ｃｈｅｍ-2\0x' : `row ${i}`,
      n: i,
    }));
    const view = tableView(rows);
    const naive = (q: string): number[] => rows.flatMap((r, i) => (`${r.t as string}`.normalize('NFKC').toLowerCase().includes(q) || String(r.n).includes(q) ? [i] : []));
    for (const q of ['chem-2', 'row 1999', '\0x', '19999']) {
      // the first search of a view reads the rows, later ones the search text it then builds
      expect(Array.from(runSteps(searchRows(tableView(rows.slice()), { kind: 'term', text: q }, null)))).toEqual(naive(q));
      expect(Array.from(runSteps(searchRows(view, { kind: 'term', text: q }, null)))).toEqual(naive(q));
    }
    expect(Array.from(runSteps(searchRows(view, { kind: 'term', text: 'chem' }, [7, 8, 1007])))).toEqual([7, 1007]);
    expect(rowSearchText(searchChunks(view), 19_999)).toBe('row 19999\n19999\n');
  });
});

describe('the search text is built a share at a time, within its bound', () => {
  // 9 chunks of 2^14 rows: each search from the second on builds at most ⌈9 / 16⌉ = 1 of them
  const rows: Row[] = Array.from({ length: 9 * 16_384 }, (_, i) => ({ t: i % 5000 === 3 ? `Ｃｈｅｍ ${i}` : `row ${i % 100}`, n: i }));
  const naive = (q: string, among?: readonly number[]): number[] =>
    (among ?? rows.map((_, i) => i)).filter((i) => `${(rows[i] as Row).t as string}\n${i}`.normalize('NFKC').toLowerCase().includes(q));
  const built = (view: ReturnType<typeof tableView>): number => view.search?.chunks.filter((c) => c !== undefined).length ?? 0;

  test('the first search builds nothing, each later one at most one chunk, and every answer agrees with a naive test', () => {
    const view = tableView({ id: 't', aliases: [], fields: [{ id: 't', type: 'text' }, { id: 'n', type: 'int' }], rows });
    const among = [3, 5003, 20_000, 40_003, 40_004, 100_003, 147_455];
    const counts: number[] = [];
    for (let k = 0; k < 7; k++) {
      const q = k % 2 === 0 ? 'chem' : 'row 9';
      expect(Array.from(runSteps(searchRows(view, { kind: 'term', text: q }, null))), q).toEqual(naive(q));
      expect(Array.from(runSteps(searchRows(view, { kind: 'term', text: '3' }, among)))).toEqual(naive('3', among));
      expect(Array.from(runSteps(searchRows(view, parseTsQuery('chem & !row'), among)))).toEqual(naive('chem', among));
      counts.push(built(view));
    }
    // each step is three searches (the very first builds nothing); a search builds only chunks it reads
    expect(counts).toEqual([2, 5, 6, 7, 8, 9, 9]);
  });

  test('a search builds no chunk once the text holds its most characters, and still answers from the rows', () => {
    const view = tableView({ id: 't', aliases: [], fields: [{ id: 't', type: 'text' }, { id: 'n', type: 'int' }], rows });
    view.search = emptySearchText(100_000);
    for (let k = 0; k < 6; k++) expect(Array.from(runSteps(searchRows(view, { kind: 'term', text: 'chem' }, null)))).toEqual(naive('chem'));
    const chunkChars = Math.max(...(view.search.chunks.map((c) => c?.text.length ?? 0)));
    expect(built(view)).toBe(1);
    expect(view.search.chars).toBeLessThan(100_000 + chunkChars);
  });
});

describe('the first search of a table', () => {
  const rows: Row[] = [
    { _id: 7, t: 'Linear ALGEBRA', n: 1.5e21, b: true },
    { t: 'ＣＨＥＭ-2', n: -Infinity, j: { k: 'Algebra' } },
    { t: 'Cafe\u0301', n: 2020, b: false },
    { t: null, n: Number.NaN },
    { t: 'ﬁne', n: 0 },
  ];
  const naive = (q: string): number[] =>
    rows.flatMap((r, i) => (Object.entries(r).some(([k, v]) => k !== '_id' && v !== null && (typeof v === 'object' ? JSON.stringify(v) : String(v)).normalize('NFKC').toLowerCase().includes(q)) ? [i] : []));

  // the evaluator completes a plain array's field list before it searches (`j` is only in a later record)
  const viewOf = (list: readonly Row[]) => {
    const view = tableView(list);
    completeFields(view);
    return view;
  };

  test.each(['algebra', 'chem-2', 'café', 'cafe', '1.5e+21', '-infinity', 'nan', 'true', 'false', '20', 'fine', '{"k"', '7'])('%j: reading the rows and the search text agree with a naive test', (q) => {
    const view = viewOf(rows.slice());
    const first = Array.from(runSteps(searchRows(view, { kind: 'term', text: q }, null)));
    expect(view.search).toBeUndefined();
    const second = Array.from(runSteps(searchRows(view, { kind: 'term', text: q }, null)));
    expect(view.search).toBeDefined();
    expect(first).toEqual(naive(q));
    expect(second).toEqual(naive(q));
    expect(Array.from(runSteps(searchRows(viewOf(rows.slice()), { kind: 'term', text: q }, [1, 2, 4])))).toEqual(naive(q).filter((i) => [1, 2, 4].includes(i)));
  });
});
