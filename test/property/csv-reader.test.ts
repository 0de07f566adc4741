/**
 * The loaders' CSV reader (src/engine/memory/csv-reader.ts) against
 * csv-parse, the parser they used before, with the options they gave it:
 * generated files (quotes, doubled quotes, quotes inside cells, CRLF, CR,
 * empty lines and cells, `,` `;` and tab delimiters, Unicode, a BOM, ragged
 * rows, open quotes), cut into chunks anywhere (inside a cell, a `""`, a
 * `\r\n`, a character's bytes), give the same records, or the same error
 * with the same line. Then the memory loader's column store (numbers,
 * booleans, dates read from bytes; a column turned to text late) against
 * csv-parse's records typed by `inferCsvType` and converted by hand.
 */
import fc from 'fast-check';
import { parse as csvParse } from 'csv-parse/sync';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decimalOf, decimalText } from '../../src/datastore/decimal.js';
import { CsvReader, CsvRecords, CsvSyntaxError } from '../../src/engine/memory/csv-reader.js';
import { inferCsvType, timestampValue } from '../../src/engine/memory/load.js';
import { loadResources } from '../../src/engine/node/load-resources.js';

type Outcome = { records: string[][] } | { error: string; line: number | undefined };

const QUOTED_EMPTY = '\u0000';

function byCsvParse(bytes: Buffer, delimiter: string, quotedEmpty: boolean): Outcome {
  try {
    const records = csvParse(bytes, {
      bom: true,
      skip_empty_lines: true,
      relax_quotes: true,
      delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      ...(quotedEmpty ? { cast: (value: string, context: { quoting: boolean }) => (value === '' && context.quoting ? QUOTED_EMPTY : value) } : {}),
    }) as string[][];
    return { records };
  } catch (error) {
    return { error: (error as Error).message, line: (error as { lines?: number }).lines };
  }
}

function byReader(bytes: Buffer, delimiter: string, quotedEmpty: boolean, cuts: readonly number[]): Outcome {
  const sink = new CsvRecords(quotedEmpty ? QUOTED_EMPTY : '');
  const reader = new CsvReader(delimiter, sink);
  const records: string[][] = [];
  try {
    let from = 0;
    for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
      reader.push(bytes.subarray(from, cut));
      records.push(...sink.take());
      from = cut;
    }
    reader.push(bytes.subarray(from));
    reader.end();
    records.push(...sink.take());
    return { records };
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    return { error: error.message, line: error.line };
  }
}

/** Pieces a CSV file is made of, the tricky ones often. */
const piece = fc.constantFrom(
  'a', 'b', 'xyz', ' ', '1', '-2.50', 'true', 'é', '日本', '😀', '\u00a0',
  ',', ',', ';', '\t', '"', '"', '""', '"x"', '"a,b"', '"1\n2"', '\n', '\n', '\r\n', '\r', '\n\n', '\u0000',
);
const soup = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

/** Well-formed records (some ragged) with cells quoted or not. */
const cell = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('', '7', '32.40', 'TRUE', '2020-02-29', 'x"y', ' spaced '),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const table = fc
  .record({
    width: fc.integer({ min: 1, max: 4 }),
    rows: fc.array(fc.array(fc.record({ text: cell, quote: fc.boolean() }), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    ragged: fc.boolean(),
    lastEol: fc.boolean(),
  })
  .map(({ width, rows, eol, ragged, lastEol }) => {
    const lines = rows.map((row) => {
      const cells = ragged ? row : Array.from({ length: width }, (_, k) => row[k % row.length] as { text: string; quote: boolean });
      return cells.map(({ text, quote }) => (quote || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)).join(',');
    });
    return lines.join(eol) + (lastEol ? eol : '');
  });

const file = fc.record({
  text: fc.oneof(soup, table),
  bom: fc.boolean(),
  delimiter: fc.constantFrom(',', ',', ';', '\t'),
  quotedEmpty: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 6 }),
});

describe('the CSV reader reads as csv-parse does', () => {
  test('generated files cut into chunks anywhere: the same records, or the same error and line', () => {
    fc.assert(
      fc.property(file, ({ text, bom, delimiter, quotedEmpty, cuts }) => {
        const bytes = Buffer.from((bom ? '\uFEFF' : '') + text, 'utf8');
        expect(byReader(bytes, delimiter, quotedEmpty, cuts)).toEqual(byCsvParse(bytes, delimiter, quotedEmpty));
      }),
      { numRuns: 500 },
    );
  });

  test('byte by byte: a character split between chunks, a `""` and a `\\r\\n` split', () => {
    const bytes = Buffer.from('\uFEFFnom,"note ""x"""\r\n"日本, 😀",é\r"a\r\nb",""\n\nx,"y"z\n', 'utf8');
    const everyByte = Array.from({ length: bytes.length }, (_, k) => k);
    expect(byReader(bytes, ',', false, everyByte)).toEqual(byCsvParse(bytes, ',', false));
    expect(byReader(bytes, ',', false, [])).toEqual({
      records: [['nom', 'note "x"'], ['日本, 😀', 'é'], ['a\r\nb', ''], ['x', '"y"z']],
    });
  });

  test('a UTF-16LE file (its BOM says so) is read as its text', () => {
    const text = 'a,b\r\n"x, y",2\r\n';
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(byReader(bytes, ',', false, [1, 5])).toEqual({ records: [['a', 'b'], ['x, y', '2']] });
  });
});

describe('the memory loader keeps what the cells say', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ckql-csv-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A cell's value by the loader's rules (README, local data), written out by hand. */
  function expected(cell: string, type: string): unknown {
    if (cell === '') return null;
    switch (type) {
      case 'int4':
      case 'int8':
      case 'numeric': {
        const n = Number(cell);
        if (/^-?\d+$/.test(cell)) return Number.isSafeInteger(n) ? n : cell;
        // A double when it holds the value: 15 digits or fewer, a safe magnitude, a normal double (or zero); else
        // the value as plain decimal text (README: numbers beyond a double are kept, grouped and joined exactly).
        const digits = cell.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
        const magnitude = Math.abs(n);
        if (digits.length <= 15 && magnitude <= Number.MAX_SAFE_INTEGER && (magnitude >= 2.2250738585072014e-308 || digits === '')) return n;
        return decimalText(decimalOf(cell)!);
      }
      case 'bool':
        return cell.toLowerCase() === 'true';
      case 'timestamp':
        return timestampValue(cell);
      default:
        return cell;
    }
  }

  const numberCell = fc.oneof(
    fc.integer({ min: -3_000_000_000, max: 3_000_000_000 }).map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((d) => d.toFixed(2)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.constantFrom('0', '-0', '-0.0', '0.10', '1e5', '1E-7', '007', '9007199254740993', '123456789012345678901234', '0.1234567890123456', '1e400', '.5', '5.'),
  );
  const family = fc.constantFrom(
    fc.array(numberCell, { minLength: 1, maxLength: 8 }),
    fc.array(fc.constantFrom('true', 'false', 'TRUE', 'False', ''), { minLength: 1, maxLength: 8 }),
    fc.array(fc.constantFrom('2020-01-31', '2021-02-29', '2020-02-29T10:00:00Z', '2023-09-07 12:30', ''), { minLength: 1, maxLength: 8 }),
  );
  const column = fc.record({
    cells: family.chain((cells) => cells),
    empties: fc.nat({ max: 3 }),
    late: fc.option(fc.constantFrom('x', 'N/A', 'true', '12', '2020-01-01'), { nil: undefined }),
  });

  test('numbers, booleans and dates read from bytes, and columns that turn to text late, as csv-parse and inferCsvType read them', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(column, { minLength: 1, maxLength: 4 }), async (columns) => {
        const height = Math.max(...columns.map((c) => c.cells.length + c.empties + 1));
        const cells = columns.map((c) => {
          const all = [...Array<string>(c.empties).fill(''), ...c.cells];
          if (c.late !== undefined) all.push(c.late);
          return Array.from({ length: height }, (_, r) => all[r] ?? '');
        });
        // a row of empty cells only would be one empty line (no record) for a one-column file
        const csv = `${columns.map((_, k) => `c${k}`).join(',')}\n${Array.from({ length: height }, (_, r) => cells.map((col) => col[r]).join(',')).join('\n')}\n`;
        const path = join(dir, `t${run++}.csv`);
        await writeFile(path, csv);
        const records = (csvParse(csv, { skip_empty_lines: true }) as string[][]).slice(1);
        const [loaded] = await loadResources(path);
        const types = columns.map((_, k) => inferCsvType(records, k));
        expect(loaded?.fields.slice(1).map((f) => f.type)).toEqual(types);
        expect(loaded?.rows.map((row) => columns.map((_, k) => row[`c${k}`]))).toEqual(records.map((record) => record.map((c, k) => expected(c, types[k] as string))));
      }),
      { numRuns: 150 },
    );
  });
});
