import { describe, expect, test } from 'vitest';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { evaluateQuery } from '../../../src/engine/memory/evaluate-query.js';
import { compile } from '../../../src/compile/compile.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import type { Row, SearchRequest, SearchResult, Table } from '../../../src/datastore/types.js';
import { DatastoreError } from '../../../src/errors.js';
import { inferFields, tableView } from '../../../src/engine/memory/table-view.js';

/** A table made by hand (not by the loader), so records are built, not handed out. */
function handTable(rows: readonly Row[], fields: Table['fields']): Table {
  return { id: 'hand-table', aliases: ['hand'], fields: [{ id: '_id', type: 'int' }, ...fields], rows: rows.map((r, i) => ({ _id: i + 1, ...r })) };
}

const courses = tableFromRows(
  [
    { title: 'Linear Algebra', subject: 'math', stage: 'active', year: 2020, credits: 5, online: true },
    { title: 'Poetry', subject: 'arts', stage: 'Active', year: 2021, credits: null, online: false },
    { title: 'Geometry', subject: 'math', stage: 'survey', year: 2021, credits: 3, online: true },
    { title: 'Ｃａｌｃｕｌｕｓ Ⅱ', subject: 'math', stage: 'null', year: 2019, credits: 5, online: null },
    { title: 'Café ﬁlms', subject: null, stage: 'active', year: 2022, credits: 4, online: false },
  ],
  { alias: 'courses' },
);

const ids = (result: SearchResult): unknown[] => result.records.map((r) => r._id);
const run = (request: Record<string, unknown>, source: Table | readonly Row[] = courses, maxLimit?: number): SearchResult =>
  evaluate({ resource_id: 'courses', ...request }, source, maxLimit === undefined ? {} : { maxLimit });

function failure(fn: () => unknown): { status: number | undefined; body: unknown } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    return { status: (error as DatastoreError).status, body: (error as DatastoreError).body };
  }
  throw new Error('expected an error');
}

describe('filters', () => {
  test('a scalar keeps equal records; equality is case-sensitive', () => {
    expect(ids(run({ filters: { stage: 'active' } }))).toEqual([1, 5]);
    expect(ids(run({ filters: { stage: 'Active' } }))).toEqual([2]);
  });

  test('a number equals its text both ways: 2020 and "2020"', () => {
    expect(ids(run({ filters: { year: 2021 } }))).toEqual([2, 3]);
    expect(ids(run({ filters: { year: '2021' } }))).toEqual([2, 3]);
    expect(ids(run({ filters: { year: '2021.0' } }))).toEqual([]);
    expect(ids(run({ filters: { year: ' 2021' } }))).toEqual([]);
  });

  test('booleans equal "true"/"false"', () => {
    expect(ids(run({ filters: { online: 'true' } }))).toEqual([1, 3]);
    expect(ids(run({ filters: { online: false } }))).toEqual([2, 5]);
    expect(ids(run({ filters: { online: 'True' } }))).toEqual([]);
  });

  test('null matches only null, never the text "null"', () => {
    expect(ids(run({ filters: { subject: null } }))).toEqual([5]);
    expect(ids(run({ filters: { stage: null } }))).toEqual([]);
    expect(ids(run({ filters: { stage: 'null' } }))).toEqual([4]);
    expect(ids(run({ filters: { online: [null, true] } }))).toEqual([1, 3, 4]);
  });

  test('a list means any of its values; an empty list keeps nothing', () => {
    expect(ids(run({ filters: { stage: ['survey', 'Active'] } }))).toEqual([2, 3]);
    expect(ids(run({ filters: { credits: [5, '3', 'x'] } }))).toEqual([1, 3, 4]);
    const empty = run({ filters: { stage: [] } });
    expect(empty.records).toEqual([]);
    expect(empty.total).toBe(0);
  });

  test('several keys must all hold, in any order', () => {
    expect(ids(run({ filters: { subject: 'math', credits: 5 } }))).toEqual([1, 4]);
    expect(ids(run({ filters: { credits: 5, subject: 'math', online: [true, null] } }))).toEqual([1, 4]);
    expect(ids(run({ filters: { subject: 'math', year: [2019, 2021], stage: ['survey', 'null'] } }))).toEqual([3, 4]);
  });

  test('filters on _id', () => {
    expect(ids(run({ filters: { _id: [2, '4', 9] } }))).toEqual([2, 4]);
  });

  test('a column of mixed types compares by canonical text', () => {
    const mixed = handTable(
      [{ v: 2020 }, { v: '2020' }, { v: 2.5 }, { v: '2.50' }, { v: true }, { v: 'true' }, { v: null }, { v: 'null' }, {}, { v: [1, 'a'] }, { v: { a: 1 } }],
      [{ id: 'v', type: 'json' }],
    );
    expect(ids(run({ filters: { v: 2020 } }, mixed))).toEqual([1, 2]);
    expect(ids(run({ filters: { v: 2.5 } }, mixed))).toEqual([3]);
    expect(ids(run({ filters: { v: true } }, mixed))).toEqual([5, 6]);
    expect(ids(run({ filters: { v: null } }, mixed))).toEqual([7, 9]);
    expect(ids(run({ filters: { v: '[1,"a"]' } }, mixed))).toEqual([10]);
    expect(ids(run({ filters: { v: '{"a":1}' } }, mixed))).toEqual([11]);
    expect(ids(run({ filters: { v: ['null', 2.5, 'true'] } }, mixed))).toEqual([3, 5, 6, 8]);
  });

  test('-0 in the data equals 0 and "0"', () => {
    const t = handTable([{ n: -0 }, { n: 0 }, { n: '0' }, { n: '-0' }], [{ id: 'n', type: 'json' }]);
    expect(ids(run({ filters: { n: 0 } }, t))).toEqual([1, 2, 3]);
    expect(ids(run({ filters: { n: '-0' } }, t))).toEqual([4]);
  });

  test('a request compiled for CKAN 2.12 is read as 2.12 without { ckan } (its operators were a 2.11 "can\'t adapt type \'dict\'")', () => {
    // each judged by the reference walker over the same records
    for (const where of ['year >= 2021', 'year between 2020 and 2021 and credits > 3', 'year > 2020 or credits = 5', 'year > 2019 and year > 2020', 'subject = math and (year < 2020 or year > 2020)']) {
      const source = `from courses where ${where}`;
      const request = compile(source, { target: 'ckan-2.12' });
      expect(ids(evaluate(request, courses)), where).toEqual(ids(evaluateQuery(source, courses)));
      expect(ids(evaluate(request, courses)), where).toEqual(ids(evaluate(request, courses, { ckan: '2.12' })));
    }
    // the forms only 2.12 reads: a list of filter objects, an operator among a field's values, $and
    expect(ids(run({ filters: [{ subject: 'math' }, { year: 2022 }] }))).toEqual([1, 3, 4, 5]);
    expect(ids(run({ filters: { year: [{ lte: 2019 }, 2022] } }))).toEqual([4, 5]);
    expect(ids(run({ filters: { $and: [{ year: { gt: 2019 } }, { year: { lt: 2022 } }] } }))).toEqual([1, 2, 3]);
    // told it is 2.11, it answers as 2.11 does
    expect(() => evaluate({ resource_id: 'courses', filters: { year: { gte: 2021 } } }, courses, { ckan: '2.11' })).toThrow("query: Invalid query (can't adapt type 'dict')");
    // and a request 2.11 reads stays 2.11's (a 2.12 reading would refuse the $ name as an unknown operator)
    const dollar = handTable([{ $x: 1 }, { $x: 2 }], [{ id: '$x', type: 'int' }]);
    expect(ids(run({ filters: { $x: 2 } }, dollar))).toEqual([2]);
  });

  test('an all-null column: null keeps all, a value keeps none', () => {
    const t = handTable([{ a: null }, {}], [{ id: 'a', type: 'text' }]);
    expect(ids(run({ filters: { a: null } }, t))).toEqual([1, 2]);
    expect(ids(run({ filters: { a: 'x' } }, t))).toEqual([]);
  });
});

describe('q: text search', () => {
  test('a case-insensitive substring of one field', () => {
    expect(ids(run({ q: 'ALGEB' }))).toEqual([1]);
    expect(ids(run({ q: 'active' }))).toEqual([1, 2, 5]);
  });

  test('NFKC on both sides: full-width letters, roman numerals, ligatures', () => {
    expect(ids(run({ q: 'calculus ii' }))).toEqual([4]);
    expect(ids(run({ q: 'Ｃａｌｃ' }))).toEqual([4]);
    expect(ids(run({ q: 'films' }))).toEqual([5]);
    expect(ids(run({ q: 'CAFÉ' }))).toEqual([5]);
    expect(ids(run({ q: 'cafe\u0301' }))).toEqual([5]);
  });

  test('white space runs in q fold to one space; blank q is no search', () => {
    expect(ids(run({ q: '  linear \n\t algebra ' }))).toEqual([1]);
    expect(run({ q: ' \t ' }).total).toBe(5);
  });

  test('the white space of a field is not folded', () => {
    const t = handTable([{ a: 'x  y' }, { a: 'x y' }], [{ id: 'a', type: 'text' }]);
    expect(ids(run({ q: 'x   y' }, t))).toEqual([2]);
  });

  test('q matches inside one field, never across two', () => {
    const t = handTable([{ a: 'foo', b: 'bar' }, { a: 'foo bar', b: null }], [{ id: 'a', type: 'text' }, { id: 'b', type: 'text' }]);
    expect(ids(run({ q: 'foo bar' }, t))).toEqual([2]);
    expect(ids(run({ q: 'oob' }, t))).toEqual([]);
  });

  test('numbers, booleans and json values are searched by their canonical text; null has none; _id is not searched', () => {
    expect(ids(run({ q: '202' }))).toEqual([1, 2, 3, 5]);
    expect(ids(run({ q: '2019' }))).toEqual([4]);
    expect(ids(run({ q: 'fals' }))).toEqual([2, 5]);
    expect(ids(run({ q: 'null' }))).toEqual([4]);
    const t = handTable([{ j: { key: 'Value' } }, { j: [1.5, true] }], [{ id: 'j', type: 'json' }]);
    expect(ids(run({ q: '"key":"value"' }, t))).toEqual([1]);
    expect(ids(run({ q: '1.5,true' }, t))).toEqual([2]);
    expect(ids(run({ q: '1' }, handTable([{ a: 'x' }], [{ id: 'a', type: 'text' }])))).toEqual([]);
  });

  test('combines with filters by AND, and does not reorder', () => {
    expect(ids(run({ q: 'a', filters: { subject: 'math' } }))).toEqual([1, 3, 4]);
    expect(ids(run({ q: 'e', filters: { online: [true, false] } }))).toEqual([1, 2, 3, 5]);
  });

  test('a newline inside a field is searched like any text', () => {
    const t = handTable([{ a: 'one\ntwo' }, { a: 'one two' }], [{ id: 'a', type: 'text' }]);
    expect(ids(run({ q: 'one two' }, t))).toEqual([2]);
    expect(ids(run({ q: 'two' }, t))).toEqual([1, 2]);
  });

  test('rows whose text normalizes to another length keep later rows findable', () => {
    // 'İ' lower-cases to two code units and 'ﬁ' normalizes to two letters: offsets of the rows after them move.
    const texts = Array.from({ length: 200 }, (_, i) => (i % 50 === 7 ? `İSTANBUL ﬁle ${i}` : `Plain row ${i}`));
    const t = tableFromRows(texts.map((text) => ({ text })), { alias: 'shift' });
    const naive = (q: string): number[] => texts.flatMap((text, i) => (text.normalize('NFKC').toLowerCase().includes(q) ? [i + 1] : []));
    for (const q of ['row 1', 'file 107', 'i̇stanbul', 'plain row 199', 'row 8', 'e 5', '180', '99', '0']) {
      expect(ids(run({ q, limit: 500 }, t)), q).toEqual(naive(q));
    }
    // mostly non-ASCII: the whole chunk is normalized at once
    const cjk = tableFromRows(Array.from({ length: 40 }, (_, i) => ({ text: `東京 ﬁ ${i}`, n: i })), { alias: 'cjk' });
    expect(ids(run({ q: 'fi 3', limit: 500 }, cjk))).toEqual([4, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40]);
  });

  test('data holding \\0 is searched exactly, and q holding \\0 finds only such data', () => {
    const t = tableFromRows([{ a: 'x\0y' }, { a: 'x' }, { a: 'y', b: 'x' }], { alias: 'nul' });
    expect(ids(run({ q: 'x\0y' }, t))).toEqual([1]);
    expect(ids(run({ q: 'x' }, t))).toEqual([1, 2, 3]);
    const clean = tableFromRows([{ a: 'x' }, { a: 'y' }], { alias: 'clean' });
    expect(ids(run({ q: 'x\0' }, clean))).toEqual([]);
    expect(ids(run({ q: 'x\0', filters: { a: ['x', 'y'] } }, clean))).toEqual([]);
  });

  test('the same over many rows (several search chunks), with few and with many filter candidates', () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => ({ n: i, tag: i % 7 === 0 ? `Needle-${i}` : `hay ${i}`, group: i % 2 }));
    const big = tableFromRows(rows, { alias: 'big' });
    const expected = rows.filter((r) => r.tag.toLowerCase().includes('needle-1')).map((r) => r.n + 1);
    expect(ids(run({ q: 'needle-1', limit: 32000 }, big))).toEqual(expected);
    const few = rows.filter((r) => r.n % 1000 === 7 && String(r.tag).toLowerCase().includes('needle')).map((r) => r.n + 1);
    const fewIds = rows.filter((r) => r.n % 1000 === 7).map((r) => r.n);
    expect(ids(run({ q: 'NEEDLE', filters: { n: fewIds }, limit: 32000 }, big))).toEqual(few);
    const many = rows.filter((r) => r.group === 1 && r.tag.toLowerCase().includes('needle')).map((r) => r.n + 1);
    expect(ids(run({ q: 'needle', filters: { group: 1 }, limit: 32000 }, big))).toEqual(many);
  });
});

describe('order', () => {
  const sorting = handTable(
    [
      { k: 'b', n: 2, t: '～' },
      { k: null, n: 10, t: 'a' },
      { k: 'a', n: null, t: '😀' },
      { k: 'B', n: 2, t: 'A' },
      { k: 'a', n: -1, t: null },
      { k: 'b', n: 2, t: 'é' },
    ],
    [{ id: 'k', type: 'text' }, { id: 'n', type: 'numeric' }, { id: 't', type: 'text' }],
  );

  test('default order is _id', () => {
    expect(ids(run({}, sorting))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test('a sort led by _id pages by row order where rows ascend by _id, and sorts them where they do not (an embedder\'s table)', () => {
    const filtered = { filters: { n: 2 } };
    expect(ids(run({ sort: '_id desc, k', ...filtered }, sorting))).toEqual([6, 4, 1]);
    expect(ids(run({ sort: '_id', offset: 1, limit: 1, ...filtered }, sorting))).toEqual([4]);
    const shuffled: Table = { ...sorting, id: 'shuffled', rows: [3, 1, 2].map((id) => ({ _id: id, k: String(id) })), fields: [{ id: '_id', type: 'int' }, { id: 'k', type: 'text' }] };
    expect(ids(run({ sort: '_id' }, shuffled))).toEqual([1, 2, 3]);
    expect(ids(run({ sort: '_id desc', limit: 2 }, shuffled))).toEqual([3, 2]);
  });

  test('asc: text by code point, nulls last, ties keep _id order', () => {
    expect(ids(run({ sort: 'k' }, sorting))).toEqual([4, 3, 5, 1, 6, 2]);
  });

  test('desc: reversed, nulls first, ties still in _id order', () => {
    expect(ids(run({ sort: 'k desc' }, sorting))).toEqual([2, 1, 6, 3, 5, 4]);
  });

  test('numbers numerically', () => {
    expect(ids(run({ sort: 'n asc' }, sorting))).toEqual([5, 1, 4, 6, 2, 3]);
    expect(ids(run({ sort: 'n desc' }, sorting))).toEqual([3, 2, 1, 4, 6, 5]);
  });

  test('code point order puts U+FF5E before U+1F600', () => {
    expect(ids(run({ sort: 't' }, sorting))).toEqual([4, 2, 6, 1, 3, 5]);
  });

  test('several keys', () => {
    expect(ids(run({ sort: 'n desc, k asc' }, sorting))).toEqual([3, 2, 4, 1, 6, 5]);
    expect(ids(run({ sort: ['n', '_id desc'] }, sorting))).toEqual([5, 6, 4, 1, 2, 3]);
  });

  test('booleans false < true, and mixed types in one column', () => {
    const t = handTable([{ v: true }, { v: 'x' }, { v: 3 }, { v: false }, { v: null }, { v: [1] }, { v: -2 }], [{ id: 'v', type: 'json' }]);
    expect(ids(run({ sort: 'v' }, t))).toEqual([4, 1, 7, 3, 2, 6, 5]);
    expect(ids(run({ sort: 'v desc' }, t))).toEqual([5, 6, 2, 3, 7, 1, 4]);
  });

  test('the top-k path and the full sort give the same page', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ score: (i * 7919) % 101, name: `n${(i * 31) % 17}`, maybe: i % 13 === 0 ? null : i % 5 }));
    const t = tableFromRows(rows, { alias: 'scores' });
    for (const sort of ['score desc', 'maybe, name desc', 'name, score', 'maybe desc']) {
      const full = run({ sort, limit: 5000 }, t).records;
      for (const [offset, limit] of [[0, 10], [0, 1], [37, 20], [4990, 100], [1000, 300]] as const) {
        expect(run({ sort, offset, limit }, t).records, `${sort} ${offset} ${limit}`).toEqual(full.slice(offset, offset + limit));
      }
    }
  });
});

describe('large tables: equality indexes and encoded columns', () => {
  // Enough rows for an index (built when a column leads a query the second time) and for dictionary codes.
  const rows = Array.from({ length: 9000 }, (_, i) => ({
    subject: ['math', 'arts', 'Math', 'bio', null][i % 5] as string | null,
    year: i % 7 === 0 ? null : 2000 + (i % 23),
    flag: i % 3 === 0,
    unique: `u${i}`,
    mixed: i % 11 === 0 ? 'x' : i % 11,
  }));
  const big = tableFromRows(rows, { alias: 'big' });
  const text = (v: unknown): string | null => (v === null ? null : typeof v === 'string' ? v : String(v));
  const naive = (filters: Record<string, unknown>): number[] =>
    rows.flatMap((row, i) =>
      Object.entries(filters).every(([f, want]) => (Array.isArray(want) ? want : [want]).some((w) => text(w) === text(row[f as keyof typeof row])))
        ? [i + 1]
        : []);

  test.each([
    [{ subject: 'math' }],
    [{ subject: ['arts', 'bio', 'nope'] }],
    [{ subject: null }],
    [{ subject: [null, 'Math'] }],
    [{ year: 2005 }],
    [{ year: ['2003', 2010, null] }],
    [{ flag: 'true' }],
    [{ unique: ['u17', 'u8999', 'u9000'] }],
    [{ mixed: ['x', 3] }],
    [{ subject: 'math', year: [2001, 2002, 2003] }],
    [{ year: 2001, flag: false, subject: ['math', 'bio'] }],
    [{ subject: ['nope'], year: 2005 }],
    [{ subject: [null, 'arts'], year: [null, 2003] }],
    [{ subject: [], year: 2001 }],
    [{ year: [2001, 2002], subject: 'math', flag: 'true' }],
  ])('%j gives the same rows on every run (scan, then index, then the other fields\' index codes)', (filters) => {
    const expected = naive(filters);
    // at most one index is built per request: by the last runs every field filtered has one
    for (let run = 0; run < 6; run++) {
      const result = evaluate({ resource_id: 'big', filters, limit: 32000 }, big);
      expect(ids(result), `run ${run}`).toEqual(expected);
      expect(result.total).toBe(expected.length);
    }
  });

  test('a second indexed field is tested on its index, not on the rows', () => {
    const table = tableFromRows(rows, { alias: 'big' });
    const request = { resource_id: 'big', filters: { subject: 'arts', year: [2001, null] }, limit: 32000 };
    for (let run = 0; run < 4; run++) evaluate(request, table);
    expect([...tableView(table).indexes.keys()].sort()).toEqual(['subject', 'year']);
    // rows changed behind the indexes' back are not read again: the answer comes from the indexes
    const changed = tableView(table).rows as Row[];
    const first = naive(request.filters)[0] as number;
    const saved = changed[first - 1] as Row;
    changed[first - 1] = { ...saved, subject: 'zzz', year: 1999 };
    try {
      expect(ids(evaluate(request, table))).toEqual(naive(request.filters));
    } finally {
      changed[first - 1] = saved;
    }
  });

  test('indexed filters combine with q, sort and paging', () => {
    const request = { resource_id: 'big', filters: { subject: ['arts', 'math'] }, q: 'u1', sort: 'subject desc, year', offset: 5, limit: 20 };
    const first = evaluate(request, big);
    for (let run = 0; run < 3; run++) expect(evaluate(request, big)).toEqual(first);
    const matching = rows
      .map((row, i) => ({ row, id: i + 1 }))
      .filter(({ row }) => (row.subject === 'arts' || row.subject === 'math') && row.unique.includes('u1'));
    matching.sort((a, b) =>
      a.row.subject === b.row.subject
        ? (a.row.year ?? Infinity) - (b.row.year ?? Infinity) || a.id - b.id
        : a.row.subject === 'math' ? -1 : 1);
    expect(ids(first)).toEqual(matching.slice(5, 25).map((m) => m.id));
  });

  test('sorting an encoded text column orders by code point, nulls last ascending', () => {
    const page = evaluate({ resource_id: 'big', sort: 'subject', fields: ['subject'], limit: 32000 }, big).records.map((r) => r.subject);
    const order = ['Math', 'arts', 'bio', 'math', null];
    expect(page).toEqual([...page].sort((a, b) => order.indexOf(a as string | null) - order.indexOf(b as string | null)));
    expect(page[0]).toBe('Math');
    expect(page.at(-1)).toBeNull();
  });
});

describe('paging and projection', () => {
  const numbers = tableFromRows(Array.from({ length: 150 }, (_, i) => ({ n: i + 1 })), { alias: 'numbers' });

  test('limit defaults to 100; total counts every match', () => {
    const result = run({}, numbers);
    expect(result.records).toHaveLength(100);
    expect(result.total).toBe(150);
    expect(result.limit).toBe(100);
    expect(result).not.toHaveProperty('offset');
  });

  test('offset skips after filtering and sorting', () => {
    const result = run({ sort: 'n desc', offset: 145, limit: 10 }, numbers);
    expect(result.records.map((r) => r.n)).toEqual([5, 4, 3, 2, 1]);
    expect(result.offset).toBe(145);
    expect(run({ offset: 500 }, numbers).records).toEqual([]);
    expect(run({ offset: 500 }, numbers).total).toBe(150);
  });

  test('limit 0 gives no records but the total', () => {
    const result = run({ limit: 0, filters: { n: [1, 2, 3] } }, numbers);
    expect(result.records).toEqual([]);
    expect(result.total).toBe(3);
    expect(result.limit).toBe(0);
  });

  test('limit above the maximum is capped, and the result shows the cap', () => {
    expect(run({ limit: 50_000 }, numbers).limit).toBe(32_000);
    const capped = run({ limit: 120 }, numbers, 7);
    expect(capped.limit).toBe(7);
    expect(capped.records).toHaveLength(7);
  });

  test('fields projects in the given order; _id only when listed; names once', () => {
    const result = run({ fields: ['year', 'title'], filters: { year: 2020 } });
    expect(result.records).toEqual([{ year: 2020, title: 'Linear Algebra' }]);
    expect(Object.keys(result.records[0] ?? {})).toEqual(['year', 'title']);
    expect(result.fields).toEqual([{ id: 'year', type: 'int4' }, { id: 'title', type: 'text' }]);
    expect(run({ fields: 'title,_id,title', limit: 1 }).records).toEqual([{ title: 'Linear Algebra', _id: 1 }]);
  });

  test('without fields every record has every field, in field order, null for missing', () => {
    const t = handTable([{ b: 1 }, { a: 'x' }], [{ id: 'a', type: 'text' }, { id: 'b', type: 'int' }]);
    const result = run({}, t);
    expect(result.records).toEqual([{ _id: 1, a: null, b: 1 }, { _id: 2, a: 'x', b: null }]);
    expect(Object.keys(result.records[0] ?? {})).toEqual(['_id', 'a', 'b']);
    expect(result.fields).toEqual(t.fields);
  });

  test('include_total false leaves total out', () => {
    const result = run({ include_total: false }, numbers);
    expect(result).not.toHaveProperty('total');
    expect(result.include_total).toBe(false);
  });
});

describe('the result', () => {
  test('echoes the request in canonical form, keys in SearchResult order', () => {
    const result = run({ filters: '{"subject":"math"}', q: 'a', sort: ['year desc'], fields: 'title', limit: '2', offset: '1' });
    expect(Object.keys(result)).toEqual([
      'resource_id', 'fields', 'records', 'total', 'total_was_estimated', 'limit', 'offset', 'q', 'filters', 'sort', 'include_total', 'records_format',
    ]);
    expect(result).toMatchObject({
      resource_id: courses.id, total: 3, total_was_estimated: false, limit: 2, offset: 1, q: 'a',
      filters: { subject: 'math' }, sort: 'year desc', include_total: true, records_format: 'objects',
    });
    expect(result.records).toEqual([{ title: 'Linear Algebra' }, { title: 'Ｃａｌｃｕｌｕｓ Ⅱ' }]);
    expect(result).not.toHaveProperty('_links');
  });

  test('resource_id is the id of the table even when the request names an alias', () => {
    expect(run({}).resource_id).toBe(courses.id);
    expect(evaluate({ resource_id: 'anything' }, [{ a: 1 }]).resource_id).toBe('anything');
  });

  test('a frozen request (as compile returns) is evaluated the same every time; a mutable one is re-read', () => {
    const frozen = Object.freeze({ resource_id: 'courses', filters: Object.freeze({ stage: Object.freeze(['active']) }) });
    expect(ids(evaluate(frozen, courses))).toEqual([1, 5]);
    expect(ids(evaluate(frozen, courses))).toEqual([1, 5]);
    const mutable = { resource_id: 'courses', filters: { stage: ['active'] } };
    expect(ids(evaluate(mutable, courses))).toEqual([1, 5]);
    mutable.filters.stage = ['survey'];
    expect(ids(evaluate(mutable, courses))).toEqual([3]);
  });
});

describe('Validation Errors for names the table does not have', () => {
  test.each([
    [{ filters: { nope: 1 } }, { __type: 'Validation Error', filters: ['invalid value "nope"'] }],
    [{ fields: ['title', 'nope'] }, { __type: 'Validation Error', fields: ['invalid value "nope"'] }],
    [{ sort: 'title, nope desc' }, { __type: 'Validation Error', sort: ['invalid value "nope desc"'] }],
    [{ sort: 'title, "no pe"' }, { __type: 'Validation Error', sort: ['invalid value "\\"no pe\\" asc"'] }],
    [{ sort: 'nope', filters: { nope: 1 }, fields: 'nope' }, { __type: 'Validation Error', fields: ['invalid value "nope"'] }],
    [{ sort: 'nope', filters: { nope: 1 } }, { __type: 'Validation Error', filters: ['invalid value "nope"'] }],
  ])('%j', (request, body) => {
    expect(failure(() => run(request))).toEqual({ status: 409, body });
  });

  test('invalid requests fail as normalizeRequest says', () => {
    expect(failure(() => run({ limit: -1 }))).toEqual({ status: 409, body: { __type: 'Validation Error', limit: ['Must be a natural number'] } });
    expect(failure(() => evaluate('not an object' as unknown as SearchRequest, courses)).status).toBe(400);
  });

  test('inherited names are not fields', () => {
    expect(failure(() => run({ filters: JSON.parse('{"constructor": 1}') as object })).body).toEqual({
      __type: 'Validation Error', filters: ['invalid value "constructor"'],
    });
  });
});

describe('plain rows with declared fields (the fields option)', () => {
  const rows = (): Row[] => [
    { code: 'PHYS-101', level: 1, note: 'intro' },
    { code: 'PHYS-303', level: 3 },
    { level: '4', code: 'CHEM-404', extra: new Date(0) as unknown as string },
  ];
  const declared = ['code', { id: 'level', type: 'int' }] as const;

  test('the answer has the declared fields; a missing one is null; other keys are no fields', () => {
    const result = evaluate({ resource_id: 'r' }, [...rows(), { note: 'only a note' }], { fields: declared });
    expect(result.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'code', type: 'text' }, { id: 'level', type: 'int4' }]);
    // a Date in a key that is no field is not read, so not refused
    expect(result.records).toEqual([
      { _id: 1, code: 'PHYS-101', level: 1 },
      { _id: 2, code: 'PHYS-303', level: 3 },
      { _id: 3, code: 'CHEM-404', level: '4' },
      { _id: 4, code: null, level: null },
    ]);
    expect(failure(() => evaluate({ resource_id: 'r', filters: { note: 'intro' } }, rows(), { fields: declared }))).toEqual({
      status: 409, body: { __type: 'Validation Error', filters: ['invalid value "note"'] },
    });
    expect(failure(() => evaluate({ resource_id: 'r', q: { note: 'intro' } }, rows(), { fields: declared })).body).toEqual({ __type: 'Validation Error', q: ['invalid value "note"'] });
    // a string q searches the declared fields only
    expect(evaluate({ resource_id: 'r', q: 'intro' }, rows(), { fields: declared }).total).toBe(0);
    expect(evaluate({ resource_id: 'r', q: 'intro' }, rows(), { fields: [...declared, 'note'] }).total).toBe(1);
  });

  test('answers as a table made with those fields does (filters, comparisons by the declared type, sort, q)', () => {
    const fields = [{ id: '_id', type: 'int' }, { id: 'code', type: 'text' }, { id: 'level', type: 'int4' }] as const;
    const table: Table = { id: 'r', aliases: [], fields, rows: rows().map(({ code, level }, i) => ({ _id: i + 1, code, level })) };
    const requests: SearchRequest[] = [
      { resource_id: 'r', filters: { level: ['3', 4] } },
      { resource_id: 'r', filters: { level: { gte: 3 } } as never, sort: 'level desc' },
      { resource_id: 'r', q: 'phys', sort: 'code desc', fields: ['level'] },
      { resource_id: 'r', sort: 'level asc', limit: 2, offset: 1 },
    ];
    for (const request of requests) {
      const options = { ckan: '2.12' as const };
      const fromTable = evaluate(request, table, options);
      const fromRows = evaluate(request, rows(), { ...options, fields: declared });
      expect({ fields: fromRows.fields, records: fromRows.records, total: fromRows.total }).toEqual({ fields: fromTable.fields, records: fromTable.records, total: fromTable.total });
    }
  });

  test('a name without a type is typed by its first non-null value; an answer\'s fields can be passed back', () => {
    const first = evaluate({ resource_id: 'r' }, [{ a: null, b: 'x' }, { a: 2 }], { fields: ['b', 'a', 'c'] });
    expect(first.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'b', type: 'text' }, { id: 'a', type: 'numeric' }, { id: 'c', type: 'text' }]);
    const again = evaluate({ resource_id: 'r', filters: { a: 2 } }, [{ a: null, b: 'x' }, { a: 2 }], { fields: first.fields });
    expect(again.fields).toEqual(first.fields);
    expect(again.records).toEqual([{ _id: 2, b: null, a: 2, c: null }]);
  });

  test('the same array with other fields is answered with those (a view per declaration)', () => {
    const same = rows().slice(0, 2);
    expect(evaluate({ resource_id: 'r' }, same, { fields: ['code'] }).fields.map((f) => f.id)).toEqual(['_id', 'code']);
    expect(evaluate({ resource_id: 'r' }, same, { fields: ['level'] }).fields.map((f) => f.id)).toEqual(['_id', 'level']);
    expect(evaluate({ resource_id: 'r' }, same).fields.map((f) => f.id)).toEqual(['_id', 'code', 'level', 'note']);
    expect(evaluate({ resource_id: 'r' }, same, { fields: ['code'] }).fields.map((f) => f.id)).toEqual(['_id', 'code']);
  });

  test.each([
    ['not a list', 'code', 'the fields option is a list of field names or CKAN fields'],
    ['an empty name', [''], 'field 1 is neither a name nor a field with an "id"'],
    ['an entry without an id', ['code', { type: 'text' }], 'field 2 is neither a name nor a field with an "id"'],
    ['a name twice', ['code', { id: 'code' }], 'the field "code" is declared twice'],
    ['an unknown type', [{ id: 'level', type: 'integr' }], 'the field "level" has the type "integr", which ckql\'s engines do not hold'],
    ['a type that is no text', [{ id: 'level', type: 4 }], 'the field "level" has the type 4, which ckql\'s engines do not hold'],
    ['info that is no object', [{ id: 'level', info: 'Level' }], 'the info of "level" must be an object'],
    ['_id as text', [{ id: '_id', type: 'text' }], 'the field "_id" is the record\'s int position'],
  ])('%s is DATA_INVALID on fields', (_name, fields, message) => {
    let error: unknown;
    try {
      evaluate({ resource_id: 'r' }, rows(), { fields: fields as never });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'DATA_INVALID', key: 'fields', message: expect.stringContaining(`fields: ${message}`) });
  });

  test('a Table keeps its own fields: the option is refused there', () => {
    expect(() => evaluate({ resource_id: 'courses' }, courses, { fields: ['title'] })).toThrow(expect.objectContaining({ code: 'DATA_INVALID', key: 'fields' }));
  });
});

describe('plain rows (no field list)', () => {
  test('fields inferred: _id first, keys by first appearance, typed by the first non-null value', () => {
    const rows = [{ a: null, b: 'x' }, { a: 2, c: true, d: { j: 1 } }, { e: null }];
    expect(evaluate({ resource_id: 'r' }, rows).fields).toEqual([
      { id: '_id', type: 'int' }, { id: 'a', type: 'numeric' }, { id: 'b', type: 'text' }, { id: 'c', type: 'bool' },
      { id: 'd', type: 'json' }, { id: 'e', type: 'text' },
    ]);
  });

  test('a key that only later records have is a field, on the first call and whichever way the call reads the rows', () => {
    // the first record's keys are only where the field list starts: a scan, a failed name check,
    // a search or the answer itself finishes it
    const rows = () => [
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
      { b: 'z', a: 3 },
      { a: 4, b: 'w', late: 'here' },
    ];
    const all = [{ id: '_id', type: 'int' }, { id: 'a', type: 'numeric' }, { id: 'b', type: 'text' }, { id: 'late', type: 'text' }];
    const scanned = evaluate({ resource_id: 'r', filters: { b: 'y' } }, rows());
    expect(scanned.fields).toEqual(all);
    expect(scanned.records).toEqual([{ _id: 2, a: 2, b: 'y', late: null }]);
    expect(evaluate({ resource_id: 'r' }, rows()).fields).toEqual(all);
    expect(ids(evaluate({ resource_id: 'r', filters: { late: 'here' } }, rows()))).toEqual([4]);
    expect(ids(evaluate({ resource_id: 'r', sort: 'late desc', limit: 1 }, rows()))).toEqual([1]);
    expect(ids(evaluate({ resource_id: 'r', q: 'here' }, rows()))).toEqual([4]);
    expect(evaluate({ resource_id: 'r', fields: ['late'], filters: { a: 4 } }, rows()).records).toEqual([{ late: 'here' }]);
    // keys in another order add nothing; the order of the fields is the first record's
    expect(evaluate({ resource_id: 'r', filters: { a: 3 } }, rows().slice(0, 3)).fields).toEqual(all.slice(0, 3));
  });

  test('with a fields projection of known fields, no other record’s keys are listed: the answer names only those fields', () => {
    // a later record that counts each listing of its keys (for…in, Object.keys): the key union lists every record's
    let listed = 0;
    const rows = (): Row[] => [
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
      new Proxy({ a: 3, b: 'z', late: 'here' }, { ownKeys: (target) => (listed++, Reflect.ownKeys(target)) }),
      { a: 4, b: 'y' },
    ];
    const projected = evaluate({ resource_id: 'r', fields: ['b', 'a'], filters: { b: 'y' }, sort: 'a desc' }, rows());
    expect(listed).toBe(0);
    expect(projected.fields).toEqual([{ id: 'b', type: 'text' }, { id: 'a', type: 'numeric' }]);
    expect(projected.records).toEqual([{ b: 'y', a: 4 }, { b: 'y', a: 2 }]);
    expect(projected.total).toBe(2);
    // without the projection the answer lists every field, so every record's keys are read
    expect(evaluate({ resource_id: 'r', filters: { b: 'y' } }, rows()).fields.map((f) => f.id)).toEqual(['_id', 'a', 'b', 'late']);
    expect(listed).toBeGreaterThan(0);
  });

  test('a record with as many keys as the first but another one adds its field, whatever its prototype holds', () => {
    // the field list is every own key of every record, counted here without the evaluator's shortcuts
    const expectFields = (rows: readonly Row[]) => {
      const seen = ['_id'];
      for (const row of rows) for (const key of Object.keys(row)) if (!seen.includes(key)) seen.push(key);
      expect(evaluate({ resource_id: 'r' }, rows).fields.map((f) => f.id)).toEqual(seen);
    };
    expectFields([{ a: 1, b: 2 }, { a: 3, b: 4 }, { a: 5, x: 6 }]);
    expectFields([{ a: 1, b: 2 }, { b: 3, a: 4 }, { x: 5, b: 6 }]);
    // `b` answers to `in` through the prototype, but is no key of the record: `x` is
    class WithGetter {
      a = 1;
      x = 2;
      get b(): number {
        return 3;
      }
    }
    expectFields([{ a: 1, b: 2 }, new WithGetter() as unknown as Row]);
    // every object answers `constructor` to `in`
    expectFields(JSON.parse('[{"constructor": 1, "a": 2}, {"a": 3, "x": 4}]') as Row[]);
    expectFields([{ a: 1 }, Object.assign(Object.create(null) as object, { x: 2 }) as Row, { a: 3 }]);
    expectFields([{ a: 1, b: 2 }, Object.assign(Object.create(null) as object, { b: 3, a: 4 }) as Row]);
  });

  test('a record the filters reject, with a key more, a key less or another key, counts in the fields of a first scan, small or large', () => {
    // the first scan of a fresh array checks every record's keys, those it keeps and those it drops alike
    const request = compile('from r where status = completed and term in ("2023-autumn", "2024-spring") and grade = 5');
    const terms = ['2023-autumn', '2024-spring', '2023-spring', '2024-autumn'];
    const statuses = ['completed', 'completed', 'failed', 'withdrawn', 'enrolled'];
    const plain = (n: number): Row[] =>
      Array.from({ length: n }, (_, i) => ({ student: `S-${i}`, term: terms[i % 4], status: statuses[(i >> 2) % 5], grade: i % 7 === 0 ? null : (i * 7) % 6 }));
    // the reference, written here: every own key in order of first appearance, typed by its first non-null value
    const referenceFields = (rows: readonly Row[]) => {
      const keys: string[] = [];
      for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
      const typeOf = (key: string): string => {
        const value = rows.map((row) => row[key]).find((v) => v !== null && v !== undefined);
        return typeof value === 'number' ? 'numeric' : typeof value === 'string' ? 'text' : typeof value === 'boolean' ? 'bool' : value === undefined ? 'text' : 'json';
      };
      return [{ id: '_id', type: 'int' }, ...keys.map((id) => ({ id, type: typeOf(id) }))];
    };
    const kept = (row: Row) => row.status === 'completed' && (row.term === '2023-autumn' || row.term === '2024-spring') && row.grade === 5;
    const changes: Record<string, (row: Row) => Row> = {
      'a key more': (row) => ({ ...row, late: true }),
      'a key less': ({ grade: _grade, ...row }) => row,
      'another key': ({ grade, ...row }) => ({ ...row, mark: grade ?? 1 }),
    };
    // 8,192 rows and more: the order of the conditions is sampled (predicate.ts, bySelectivity)
    for (const n of [40, 10_000]) {
      for (const [change, make] of Object.entries(changes)) {
        for (const at of [1, n >> 1, n - 1]) {
          const rows = plain(n);
          expect(kept(rows[at] as Row)).toBe(false);
          rows[at] = make(rows[at] as Row);
          const label = `${change} in record ${at + 1} of ${n}`;
          const result = evaluate(request, rows);
          expect(result.fields, label).toEqual(referenceFields(rows));
          expect(result.fields, label).toEqual(inferFields(rows));
          const matches = rows.flatMap((row, i) => (kept(row) ? [i + 1] : []));
          expect(result.total, label).toBe(matches.length);
          expect(ids(result), label).toEqual(matches.slice(0, 100));
          // a record without a field holds null for it
          const names = result.fields.map((f) => f.id);
          for (const record of result.records) expect(Object.keys(record), label).toEqual(names);
        }
      }
    }
  });

  test('one compiled request over arrays whose fields differ is checked and read by each array\'s fields', () => {
    // the request is prepared once per field list: its comparison reads by each list's type, and a name one list lacks fails there only
    const request = compile('from r where year >= 2020', { target: 'ckan-2.12' });
    const numbers = () => [{ year: 999 }, { year: 2021 }];
    const texts = () => [{ year: '999' }, { year: '2021' }];
    for (let round = 0; round < 3; round++) {
      expect(ids(evaluate(request, numbers(), { ckan: '2.12' }))).toEqual([2]);
      // text by code point: "999" comes after "2020"
      expect(ids(evaluate(request, texts(), { ckan: '2.12' }))).toEqual([1, 2]);
      expect(ids(evaluate(request, texts(), { ckan: '2.12', fields: [{ id: 'year', type: 'int' }] }))).toEqual([2]);
      expect(failure(() => evaluate(request, [{ when: 2021 }, { when: 2022 }], { ckan: '2.12' })).status).toBe(409);
    }
  });

  test('a record with an inherited enumerable key is read by its own keys', () => {
    const inherited = Object.assign(Object.create({ ghost: 'boo' }) as object, { a: 2 }) as Row;
    const rows: Row[] = [{ a: 1 }, inherited, { a: 3 }];
    const result = evaluate({ resource_id: 'r', filters: { a: 2 } }, rows);
    expect(result.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'a', type: 'numeric' }]);
    expect(result.records).toEqual([{ _id: 2, a: 2 }]);
  });

  test('_id is the position when missing; the objects of the caller are not changed', () => {
    const rows = [{ a: 1 }, { a: 2 }];
    const copy = structuredClone(rows);
    const result = evaluate({ resource_id: 'r', filters: { a: 2 } }, rows);
    expect(result.records).toEqual([{ _id: 2, a: 2 }]);
    expect(rows).toEqual(copy);
    expect(result.records[0]).not.toBe(rows[1]);
  });

  test('an unknown name is a Validation Error, as on the server', () => {
    const rows = [{ a: 1 }, { a: 2 }];
    const table = tableFromRows(rows, { alias: 'r' });
    const requests: Omit<SearchRequest, 'resource_id'>[] = [{ filters: { nope: null } }, { fields: ['nope', 'a'] }, { sort: 'nope desc' }, { filters: { a: 1, nope: 1 } }];
    for (const request of requests) {
      const fromRows = failure(() => evaluate({ resource_id: 'r', ...request }, rows));
      expect(fromRows.status).toBe(409);
      expect(fromRows).toEqual(failure(() => evaluate({ resource_id: 'r', ...request }, table)));
    }
  });

  test('keys like constructor and __proto__ are read as own data only', () => {
    const rows = JSON.parse('[{"__proto__": "p", "a": 1}, {"constructor": "c", "a": 2}, {"a": 3}]') as Row[];
    expect(ids(evaluate({ resource_id: 'r', filters: { constructor: null } }, rows))).toEqual([1, 3]);
    // In a JS literal `__proto__: 'p'` is no key at all (a non-object prototype is ignored): no filter.
    expect(ids(evaluate({ resource_id: 'r', filters: { __proto__: 'p' } as unknown as Record<string, string> }, rows))).toEqual([1, 2, 3]);
    const byProto = evaluate(JSON.parse('{"resource_id": "r", "filters": {"__proto__": "p"}}'), rows);
    expect(ids(byProto)).toEqual([1]);
    const record = byProto.records[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(record, '__proto__')?.value).toBe('p');
    expect(ids(evaluate({ resource_id: 'r', q: 'function' }, rows))).toEqual([]);
  });

  test('a rows array that grows is seen with its new rows', () => {
    const rows: Row[] = [{ a: 'x' }];
    expect(evaluate({ resource_id: 'r', q: 'y' }, rows).total).toBe(0);
    rows.push({ a: 'y' });
    expect(ids(evaluate({ resource_id: 'r', q: 'y' }, rows))).toEqual([2]);
  });

  test('the same result as the table built from the same rows', () => {
    const rows = [{ t: 'B', n: 2 }, { t: 'a', n: null }, { t: null, n: 1 }];
    const table = tableFromRows(rows, { alias: 'x' });
    for (const request of [{}, { sort: 't desc' }, { q: 'b' }, { filters: { n: [1, 2] }, fields: ['n'] }]) {
      const fromRows = evaluate({ resource_id: 'x', ...request }, rows);
      const fromTable = evaluate({ resource_id: 'x', ...request }, table);
      expect(fromRows.records).toEqual(fromTable.records);
      expect(fromRows.total).toBe(fromTable.total);
    }
  });
});

describe('types and values of plain records', () => {
  interface Course {
    title: string;
    year: number;
    level?: number | null;
  }

  test('rows typed with an interface are accepted, and a request is type-checked', () => {
    const courses: Course[] = [{ title: 'Algebra', year: 2020 }, { title: 'Poetry', year: 2021, level: 2 }];
    expect(evaluate({ resource_id: 'c', filters: { year: 2021 } }, courses).records).toEqual([{ _id: 2, title: 'Poetry', year: 2021, level: 2 }]);
    // @ts-expect-error `limit` is a number
    expect(() => evaluate({ resource_id: 'c', limit: 'ten' }, courses)).toThrow(/limit/);
  });

  test('evaluateQuery takes the same interface-typed rows as evaluate', () => {
    const courses: Course[] = [{ title: 'Algebra', year: 2020 }, { title: 'Poetry', year: 2021, level: 2 }];
    const query = 'from c where year = 2021 select title';
    expect(evaluateQuery(query, courses).records).toEqual([{ title: 'Poetry' }]);
    expect(evaluateQuery(query, courses).records).toEqual(evaluate(compile(query), courses).records);
  });

  test('a Date is refused by the types and at run time: dates are ISO text', () => {
    interface Event {
      name: string;
      on: Date;
    }
    const events: Event[] = [{ name: 'launch', on: new Date(Date.UTC(2020, 0, 1)) }];
    // @ts-expect-error a Date is not a JSON value
    const run = () => evaluate({ resource_id: 'e' }, events);
    expect(run).toThrow(/record 1 holds a Date in "on": values must be JSON \(give a date as ISO text\)/);
  });

  test('a Date in a later record is refused where the answer shows it, inferred or declared', () => {
    const rows = [{ name: 'plan', on: '2020-01-01' }, { name: 'launch', on: new Date(Date.UTC(2020, 0, 1)) as unknown as string }];
    for (const options of [{}, { fields: ['name', 'on'] }]) {
      expect(() => evaluate({ resource_id: 'e' }, rows, options)).toThrow(/record 2 holds a Date in "on"/);
      expect(evaluate({ resource_id: 'e', filters: { name: 'plan' } }, rows, options).records).toEqual([{ _id: 1, name: 'plan', on: '2020-01-01' }]);
    }
  });
});

describe('one request over many arrays', () => {
  const rows = (): Row[] => [
    { subject: 'math', year: 2020 },
    { subject: 'arts', year: 2021 },
    { subject: 'math', year: 2021 },
  ];

  test('a compiled (deeply frozen) request gives the same answer on every fresh array, and for each CKAN version', () => {
    const request = compile('from courses where subject = math order by year desc limit 1');
    for (let i = 0; i < 3; i++) expect(ids(evaluate(request, rows()))).toEqual([3]);
    expect(ids(evaluate(request, rows(), { ckan: '2.12' }))).toEqual([3]);
  });

  test('a request that can change is read again on every call', () => {
    const filters: Record<string, unknown> = { subject: 'math' };
    // frozen on the outside only: its filters can still change
    const request = Object.freeze({ resource_id: 'courses', filters }) as unknown as SearchRequest;
    expect(ids(evaluate(request, rows()))).toEqual([1, 3]);
    filters.subject = 'arts';
    expect(ids(evaluate(request, rows()))).toEqual([2]);
    const open: Record<string, unknown> = { resource_id: 'courses', limit: 1 };
    expect(ids(evaluate(open as unknown as SearchRequest, rows()))).toEqual([1]);
    open.limit = 2;
    expect(ids(evaluate(open as unknown as SearchRequest, rows()))).toEqual([1, 2]);
  });

  test('a request made anew for each call is known by its content: alike content, alike answer; other content, its own', () => {
    const compiled = compile('from courses where subject = math order by year desc');
    for (let i = 0; i < 3; i++) expect(ids(evaluate({ ...compiled, fields: ['_id', 'subject', 'year'] }, rows()))).toEqual([3, 1]);
    expect(ids(evaluate({ ...compiled, fields: ['_id', 'subject', 'year'], limit: 1 }, rows()))).toEqual([3]);
    expect(ids(evaluate({ ...compiled, filters: { subject: 'arts' }, fields: ['_id', 'subject'] }, rows()))).toEqual([2]);
    // A refused request is refused on every call; -0, which JSON writes as 0, is read again.
    expect(failure(() => evaluate({ ...compiled, limit: 'x' } as unknown as SearchRequest, rows())).status).toBe(409);
    expect(failure(() => evaluate({ ...compiled, limit: 'x' } as unknown as SearchRequest, rows())).status).toBe(409);
    expect(ids(evaluate({ ...compiled, offset: -0 } as SearchRequest, rows()))).toEqual([3, 1]);
  });

  test('a frozen request with an accessor is read again on every call', () => {
    let limit = 1;
    const request = Object.freeze(Object.defineProperty({ resource_id: 'courses' }, 'limit', { get: () => limit, enumerable: true }));
    expect(ids(evaluate(request as SearchRequest, rows()))).toEqual([1]);
    limit = 3;
    expect(ids(evaluate(request as SearchRequest, rows()))).toEqual([1, 2, 3]);
  });

  test('a frozen request the table refuses is refused on every call', () => {
    const request = compile('from courses where nope = 1');
    for (let i = 0; i < 2; i++) expect(failure(() => evaluate(request, rows())).status).toBe(409);
  });
});

describe('views of plain arrays', () => {
  test('an array used once leaves no view behind; from its second use its view is kept, a table\'s from its first', () => {
    const rows: Row[] = [{ a: 1 }, { a: 2 }];
    const first = tableView(rows);
    const second = tableView(rows);
    expect(second).not.toBe(first);
    expect(tableView(rows)).toBe(second);
    const table = tableFromRows(rows, { alias: 't' });
    expect(tableView(table)).toBe(tableView(table));
  });

  test('an array searched again builds its equality index and search text, and answers as before', () => {
    const rows: Row[] = Array.from({ length: 2000 }, (_, i) => ({ status: i % 3 === 0 ? 'failed' : 'completed', note: i % 7 === 0 ? 'Chem lab' : 'other' }));
    const request = compile('from t where status = failed search "chem"');
    const answers = Array.from({ length: 4 }, () => evaluate(request, rows).total);
    expect(new Set(answers)).toEqual(new Set([rows.filter((r, i) => i % 3 === 0 && i % 7 === 0).length]));
    const view = tableView(rows);
    expect(view.indexes.get('status')).toBeTruthy();
    expect(view.search).toBeDefined();
  });
});
