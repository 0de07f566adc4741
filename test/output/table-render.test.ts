/**
 * The ink views through `renderToString` (via `renderResultTable`): column
 * fitting, cutting with an ellipsis by display width, the vertical view,
 * the footer; and the layout rules underneath.
 */
import { stripVTControlCharacters } from 'node:util';
import stringWidth from 'string-width';
import { formatRecords } from '../../src/output/format-records.js';
import { describe, expect, it } from 'vitest';
import type { FieldInfo, Row, SearchResult } from '../../src/datastore/types.js';
import { cellOf, footerText, layoutTable, truncate } from '../../src/output/table/layout.js';
import { renderInfoTable, renderResultTable } from '../../src/output/table/render.js';

function resultOf(fields: readonly FieldInfo[], records: readonly Row[], extra: Partial<SearchResult> = {}): SearchResult {
  return {
    resource_id: 'r',
    fields,
    records,
    total: records.length,
    total_was_estimated: false,
    limit: 100,
    include_total: true,
    records_format: 'objects',
    ...extra,
  };
}

const courseFields: FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'code', type: 'text' },
  { id: 'title', type: 'text' },
  { id: 'credits', type: 'numeric' },
  { id: 'online', type: 'bool' },
];

const courses: Row[] = [
  { _id: 1, code: 'MATH-101', title: 'Linear Algebra I', credits: 7.5, online: true },
  { _id: 2, code: 'MATH-102', title: "Éléments d'algèbre linéaire", credits: null, online: false },
  { _id: 3, code: 'HIST-101', title: '日本史入門', credits: 5, online: null },
];

const lines = (text: string): string[] => text.split('\n');

describe('renderResultTable', () => {
  it('draws a header, a rule and one aligned line per record, numbers on the right', () => {
    const text = renderResultTable(resultOf(courseFields, courses, { total: 320 }), { width: 100, color: false, elapsedMs: 12.3 });
    expect(lines(text)).toEqual([
      ' _id │ code     │ title                       │ credits │ online',
      '─────┼──────────┼─────────────────────────────┼─────────┼───────',
      '   1 │ MATH-101 │ Linear Algebra I            │     7.5 │ true',
      "   2 │ MATH-102 │ Éléments d'algèbre linéaire │       ∅ │ false",
      '   3 │ HIST-101 │ 日本史入門                  │       5 │ ∅',
      '3 of 320 records, 12 ms',
    ]);
  });

  it('lines up wide (CJK) characters by display width, not by string length', () => {
    const text = renderResultTable(resultOf(courseFields, courses), { width: 100, color: false });
    const rows = lines(text).filter((line) => line.includes('│'));
    expect(rows).toHaveLength(4);
    const widths = rows.map((line) => stringWidth(line.slice(0, line.lastIndexOf('│'))));
    expect(new Set(widths).size).toBe(1);
  });

  it('cuts the widest columns with an ellipsis to fit the width, never the numbers', () => {
    const text = renderResultTable(resultOf(courseFields, courses), { width: 50, color: false });
    for (const line of lines(text)) expect(stringWidth(line)).toBeLessThanOrEqual(50);
    expect(text).toContain('…');
    expect(text).toMatch(/│ Éléments d'a… │/);
    expect(text).not.toContain('Linear Algebra I ');
    // numbers keep their width
    expect(text).toMatch(/│ +7\.5 │/);
  });

  it('switches to one record per block when even cut columns cannot fit', () => {
    const text = renderResultTable(resultOf(courseFields, courses.slice(0, 2), { total: 320 }), { width: 30, color: false });
    expect(lines(text)).toEqual([
      '─[ 1 ]────────────────────────',
      '_id     │ 1',
      'code    │ MATH-101',
      'title   │ Linear Algebra I',
      'credits │ 7.5',
      'online  │ true',
      '─[ 2 ]────────────────────────',
      '_id     │ 2',
      'code    │ MATH-102',
      "title   │ Éléments d'algèbre …",
      'credits │ ∅',
      'online  │ false',
      '2 of 320 records',
    ]);
  });

  it('numbers the blocks from the offset of the result', () => {
    const text = renderResultTable(resultOf(courseFields, courses.slice(0, 1), { total: 320, offset: 40 }), { width: 30, color: false });
    expect(lines(text)[0]).toMatch(/^─\[ 41 \]─+$/);
    expect(text).toContain('1 of 320 records from offset 40');
  });

  it('shows at most maxRows records and says how many were left out', () => {
    const text = renderResultTable(resultOf(courseFields, courses, { total: 320 }), { width: 100, color: false, maxRows: 1 });
    expect(text).toContain(' … 2 more records not shown');
    expect(text).toContain('3 of 320 records, 1 shown');
    expect(text).not.toContain('MATH-102');
  });

  it('prints only the header and the footer for no records, and no total when the server gave none', () => {
    const empty = renderResultTable(resultOf(courseFields, [], { total: 0 }), { width: 100, color: false });
    expect(lines(empty)).toHaveLength(3);
    expect(empty).toContain('0 of 0 records');
    const noTotal = renderResultTable(resultOf(courseFields, courses.slice(0, 1), { total: undefined }), { width: 100, color: false });
    expect(lines(noTotal).at(-1)).toBe('1 record');
  });

  it('shows every value whole with width Infinity (the table format in a pipe)', () => {
    const long = 'x'.repeat(300);
    const text = renderResultTable(resultOf([{ id: 'v', type: 'text' }], [{ v: long }]), { width: Infinity, color: false });
    expect(text).toContain(long);
  });

  it('shows bidi overrides and zero-width characters as escapes, in the table and in markdown', async () => {
    const value = 'report\u202Etxt.exe and\u200Bhidden';
    const text = renderResultTable(resultOf([{ id: 'v', type: 'text' }], [{ v: value }]), { width: 80, color: false });
    expect(text).not.toMatch(/[\u202e\u200b]/);
    expect(text).toContain('report\\u202Etxt.exe and\\u200Bhidden');
    const markdown = await formatRecords(resultOf([{ id: 'v', type: 'text' }], [{ v: value }]), 'markdown');
    expect(markdown).not.toMatch(/[\u202e\u200b]/);
    expect(markdown).toContain('report\\\\u202Etxt.exe');
  });

  it('a null and the text "null" look different without colour', () => {
    const text = renderResultTable(resultOf([{ id: 'v', type: 'text' }], [{ v: null }, { v: 'null' }]), { width: 80, color: false });
    const [, , first, second] = text.split('\n');
    expect(first?.trim()).toBe('∅');
    expect(second?.trim()).toBe('null');
  });

  it('keeps control characters in data away from the terminal', () => {
    const text = renderResultTable(resultOf([{ id: 'v', type: 'text' }], [{ v: 'a\nb\u001b[31mc\td' }]), { width: 80, color: false });
    expect(text).not.toContain('\u001b');
    expect(text).toContain('a↵b␛[31mc d');
  });

  it('colours the header and nulls only when asked', () => {
    const result = resultOf(courseFields, courses);
    const plain = renderResultTable(result, { width: 100, color: false });
    expect(plain).not.toContain('\u001b[');
    const coloured = renderResultTable(result, { width: 100, color: true });
    // Without colour a null is ∅, so it never reads like the text "null"; with colour it is a dim, italic null.
    const stripped = stripVTControlCharacters(coloured).split('\n');
    expect(stripped.slice(0, 2)).toEqual(plain.split('\n').slice(0, 2));
    expect(stripped[2]).toBe(plain.split('\n')[2]);
    expect(stripped).toHaveLength(plain.split('\n').length);
    // ink re-emits the escape codes in its own order: look for the style switched on before the text
    const esc = '\u001b\\[';
    expect(coloured).toMatch(new RegExp(`${esc}1m_id`)); // bold header
    expect(coloured).toMatch(new RegExp(`${esc}(?:2;)?3m +null`)); // italic (and dim) null
    expect(coloured).toMatch(new RegExp(`${esc}2m3 of 3 records`)); // dim footer
  });
});

describe('renderInfoTable', () => {
  it('draws text rows with a note, cut to the width', () => {
    const text = renderInfoTable(['field', 'type'], [['title', 'text'], ['level', 'int']], { width: 40, color: false, note: '2 fields of courses' });
    expect(lines(text)).toEqual([' field │ type', '───────┼─────', ' title │ text', ' level │ int', '2 fields of courses']);
  });
});

describe('layout', () => {
  it('truncate cuts by display width at grapheme boundaries', () => {
    expect(truncate('Linear Algebra II', 10)).toBe('Linear Al…');
    expect(truncate('日本史入門', 6)).toBe('日本…');
    expect(stringWidth(truncate('日本史入門', 6))).toBe(5);
    expect(truncate('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301…');
    expect(truncate('short', 10)).toBe('short');
    expect(truncate('abc', 0)).toBe('');
  });

  it('layoutTable keeps natural widths when they fit and shrinks the widest first', () => {
    const fields: FieldInfo[] = [
      { id: 'a', type: 'text' },
      { id: 'b', type: 'text' },
    ];
    const rows = [[cellOf('x'.repeat(10)), cellOf('y'.repeat(40))]];
    const fits = layoutTable(fields, rows, 80);
    expect(fits).toEqual({ kind: 'table', columns: [{ id: 'a', width: 10, align: 'left' }, { id: 'b', width: 40, align: 'left' }] });
    const narrow = layoutTable(fields, rows, 34);
    expect(narrow.kind).toBe('table');
    if (narrow.kind === 'table') {
      expect(narrow.columns.map((c) => c.width)).toEqual([10, 20]);
    }
  });

  it('footerText says how many of how many, from which offset, how many shown, how long', () => {
    expect(footerText({ returned: 5, total: 318, elapsedMs: 3.24 })).toBe('5 of 318 records, 3.2 ms');
    expect(footerText({ returned: 1, total: 1 })).toBe('1 of 1 record');
    expect(footerText({ returned: 20, total: 318, offset: 20, shown: 10, elapsedMs: 1500 })).toBe(
      '20 of 318 records from offset 20, 10 shown, 1500 ms',
    );
    expect(footerText({ returned: 3, elapsedMs: 12_345 })).toBe('3 records, 12.3 s');
  });
});
