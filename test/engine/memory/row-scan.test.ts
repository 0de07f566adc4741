/**
 * The first request on a table reads the row objects in one generated pass
 * (row-scan.ts); later requests use columns. Both must give the same answers,
 * whatever the field names hold, with or without code generation.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { prepareSource } from '../../../src/engine/memory/source.js';
import { tableFromRows } from '../../../src/engine/memory/load.js';
import type { Row, SearchResult, Table } from '../../../src/datastore/types.js';

const ids = (result: SearchResult): unknown[] => result.records.map((r) => r._id);

describe('columns are built on the second use of a field', () => {
  test('the first request reads the rows; the second builds the columns it uses', () => {
    // made by hand, not by the loader (which hands over encoded text columns)
    const table: Table = {
      id: 'courses',
      aliases: [],
      fields: [{ id: '_id', type: 'int' }, { id: 'subject', type: 'text' }, { id: 'year', type: 'int' }],
      rows: Array.from({ length: 50 }, (_, i) => ({ _id: i + 1, subject: i % 3 === 0 ? 'math' : 'arts', year: 2000 + (i % 4) })),
    };
    const request = { resource_id: 'courses', filters: { subject: 'math' }, sort: 'year desc' };
    const first = evaluate(request, table);
    expect(prepareSource(table).columns.size).toBe(0);
    const second = evaluate(request, table);
    expect([...prepareSource(table).columns.keys()].sort()).toEqual(['subject', 'year']);
    expect(second).toEqual(first);
    expect(first.total).toBe(17);
    const years = first.records.map((r) => r.year as number);
    expect(years).toEqual([...years].sort((a, b) => b - a));
  });
});

describe('text columns encoded by the loader', () => {
  const rows = Array.from({ length: 400 }, (_, i) => ({
    status: ['failed', 'passed', null, 'withdrawn'][i % 4] as string | null,
    grade: i % 6,
    // not encodable: more distinct texts than a quarter of the rows
    note: `n${i}`,
    // not encodable: text and numbers mixed
    mixed: i % 2 === 0 ? 'x' : i,
  }));
  const naive = (keep: (row: (typeof rows)[number]) => boolean): number[] => rows.flatMap((row, i) => (keep(row) ? [i + 1] : []));

  test('are columns from the first request on; other fields still wait for their second use', () => {
    const table = tableFromRows(rows, { alias: 'loaded' });
    const request = { resource_id: 'loaded', filters: { status: ['failed', 'withdrawn'] }, sort: 'status desc', limit: 400 };
    const first = evaluate(request, table);
    const columns = prepareSource(table).columns;
    expect([...columns.keys()]).toEqual(['status']);
    expect(columns.get('status')?.codes).toBeInstanceOf(Int32Array);
    const second = evaluate({ ...request, filters: { status: ['failed', 'withdrawn'], note: ['n3', 'n7', 'n8'] } }, table);
    expect(columns.has('note')).toBe(false);
    expect(ids(second)).toEqual([4, 8, 9]);
    expect(first.total).toBe(200);
    expect(first.records.slice(0, 3).map((r) => r.status)).toEqual(['withdrawn', 'withdrawn', 'withdrawn']);
  });

  test.each([
    [{ status: 'passed' }, (row: (typeof rows)[number]) => row.status === 'passed'],
    [{ status: [null, 'nope'] }, (row: (typeof rows)[number]) => row.status === null],
    [{ mixed: ['x', '3'] }, (row: (typeof rows)[number]) => row.mixed === 'x' || row.mixed === 3],
    [{ note: 'n9', status: 'passed' }, (row: (typeof rows)[number]) => row.note === 'n9' && row.status === 'passed'],
  ])('%j: the same rows on every run, and from a table object over the same rows', (filters, keep) => {
    const table = tableFromRows(rows, { alias: 'loaded' });
    for (let run = 0; run < 4; run++) {
      expect(ids(evaluate({ resource_id: 'loaded', filters, limit: 400 }, table)), `run ${run}`).toEqual(naive(keep));
      expect(ids(evaluate({ resource_id: 'loaded', filters, limit: 400 }, { ...table })), `copy, run ${run}`).toEqual(naive(keep));
    }
  });
});

describe('field names are data, never code', () => {
  const names = [
    'plain',
    'with "quotes"',
    "it's",
    'back\\slash',
    '"]; throw new Error("injected"); //',
    '`${process.exit(1)}`',
    'line\u2028separator',
    'new\nline',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
  ];

  test.each(names)('%j filters and sorts the same on the first, second and third request', (name) => {
    const rows: Row[] = Array.from({ length: 40 }, (_, i) => {
      const row: Record<string, unknown> = { n: i };
      // defineProperty: `row["__proto__"] = …` would set the prototype instead of a field
      Object.defineProperty(row, name, { value: i % 5 === 0 ? null : `v${i % 4}`, enumerable: true, writable: true, configurable: true });
      return row as Row;
    });
    const table = tableFromRows(rows, { alias: 'odd' });
    const expected = rows.flatMap((row, i) => (Object.getOwnPropertyDescriptor(row, name)?.value === 'v2' ? [i + 1] : []));
    const sortName = `"${name.replaceAll('"', '""')}"`;
    for (let run = 0; run < 3; run++) {
      const filtered = evaluate({ resource_id: 'odd', filters: { [name]: ['v2', 'nope'] }, limit: 100 }, table);
      expect(ids(filtered), `run ${run}`).toEqual(expected);
      const sorted = evaluate({ resource_id: 'odd', filters: { n: [1, 2, 3, 5, 6] }, sort: `${sortName} desc` }, table);
      // desc: nulls first, then v3, v2, v1; ties in _id order
      expect(ids(sorted), `run ${run}`).toEqual([6, 4, 3, 7, 2]);
    }
  });
});

describe('without code generation', () => {
  test('the closure fallback answers as the generated code does (node --disallow-code-generation-from-strings)', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
    const requests = [
      { filters: { status: ['failed', 'withdrawn'], grade: 2 } },
      { filters: { grade: ['5', 4.5, null] }, sort: 'grade desc, status', limit: 7 },
      { filters: { status: 'completed' }, q: 'chem', limit: 3 },
      { filters: { flag: 'true', status: [] as string[] } },
      { filters: { mixed: ['2', 'x'] }, sort: 'mixed', offset: 2, limit: 5 },
    ];
    const script = `
      import { evaluate } from ${JSON.stringify(path.join(root, 'src/engine/memory/evaluate.ts'))};
      import { tableFromRows } from ${JSON.stringify(path.join(root, 'src/engine/memory/load.ts'))};
      const rows = ${makeRows.toString()};
      const table = tableFromRows(rows(), { alias: 'enrolments' });
      const requests = ${JSON.stringify(requests)};
      const out = [];
      for (let run = 0; run < 3; run++) for (const r of requests) out.push(evaluate({ resource_id: 'enrolments', ...r }, table));
      let generated = true;
      try { new Function(''); } catch { generated = false; }
      process.stdout.write(JSON.stringify({ generated, out }));
    `;
    const dir = mkdtempSync(path.join(tmpdir(), 'ckql-row-scan-'));
    try {
      const file = path.join(dir, 'run.mts');
      writeFileSync(file, script);
      const child = JSON.parse(
        execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', file], { cwd: root, encoding: 'utf8' }),
      ) as { generated: boolean; out: unknown[] };
      expect(child.generated).toBe(false);
      const table = tableFromRows(makeRows(), { alias: 'enrolments' });
      const here: unknown[] = [];
      for (let run = 0; run < 3; run++) for (const r of requests) here.push(evaluate({ resource_id: 'enrolments', ...r }, table));
      expect(child.out).toEqual(JSON.parse(JSON.stringify(here)));
      expect((here[0] as SearchResult).total).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Rows for the fallback test; its source is also sent to the child process, so it uses nothing from outside. */
function makeRows(): Row[] {
  const statuses = ['completed', 'failed', 'withdrawn', 'enrolled', null];
  const out: Row[] = [];
  for (let i = 0; i < 300; i++) {
    out.push({
      status: statuses[i % 5] ?? null,
      grade: i % 7 === 0 ? null : 1 + (i % 10) / 2,
      course: `CHEM-${100 + (i % 13)}`,
      flag: i % 3 === 0,
      mixed: i % 4 === 0 ? 'x' : i % 6,
    });
  }
  return out;
}
