import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { FieldInfo, Row, SearchResult } from '../../src/datastore/types.js';
import { ToolError } from '../../src/errors.js';
import { createRecordWriter, formatRecords, outputFormats, parseOutputFormat } from '../../src/output/format-records.js';

const fields: FieldInfo[] = [
  { id: '_id', type: 'int' },
  { id: 'name', type: 'text' },
  { id: 'score', type: 'numeric' },
  { id: 'ok', type: 'bool' },
  { id: 'meta', type: 'json' },
];

const records: Row[] = [
  { _id: 1, name: '=HYPERLINK("http://x")', score: -3, ok: true, meta: { a: [1, 2] } },
  { _id: 2, name: 'a | b\nc', score: 2.5, ok: false, meta: null },
  { _id: 3, name: '+1', score: null, ok: null },
  { _id: 4, name: 'plain, "quoted"', score: -0, ok: true, meta: 'text' },
];

/** What JSON can say: `-0` reads back as `0`. */
const asJson = JSON.parse(JSON.stringify(records)) as Row[];

function result(rows: readonly Row[]): SearchResult {
  return {
    resource_id: 'r',
    fields,
    records: rows,
    total: rows.length,
    total_was_estimated: false,
    limit: 100,
    include_total: true,
    records_format: 'objects',
  };
}

describe('csv', () => {
  it('writes the header in field order and escapes spreadsheet formulas in text, never in numbers', async () => {
    const text = await formatRecords(result(records), 'csv');
    const rows = parseCsv(text) as string[][];
    expect(rows[0]).toEqual(['_id', 'name', 'score', 'ok', 'meta']);
    expect(rows[1]).toEqual(['1', `'=HYPERLINK("http://x")`, '-3', 'true', '{"a":[1,2]}']);
    expect(rows[2]).toEqual(['2', 'a | b\nc', '2.5', 'false', '']);
    expect(rows[3]).toEqual(['3', "'+1", '', '', '']);
    expect(rows[4]).toEqual(['4', 'plain, "quoted"', '0', 'true', 'text']);
  });

  it('prints the header for an empty result', async () => {
    expect(await formatRecords(result([]), 'csv')).toBe('_id,name,score,ok,meta\n');
  });
});

describe('json and ndjson', () => {
  it('json is one array that parses back to the records, compact or pretty', async () => {
    for (const pretty of [false, true]) {
      const text = await formatRecords(result(records), 'json', { pretty });
      expect(JSON.parse(text)).toEqual(asJson);
      expect(text.endsWith('\n')).toBe(true);
    }
    expect(await formatRecords(result([]), 'json')).toBe('[]\n');
    expect((await formatRecords(result(records), 'json', { pretty: true })).split('\n')[2]).toBe('    "_id": 1,');
  });

  it('ndjson is one record per line', async () => {
    const text = await formatRecords(result(records), 'ndjson');
    expect(text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Row)).toEqual(asJson);
    expect(await formatRecords(result([]), 'ndjson')).toBe('');
  });
});

describe('markdown', () => {
  it('escapes pipes and line breaks, and right-aligns number columns', async () => {
    const text = await formatRecords(result(records.slice(1, 2)), 'markdown');
    expect(text).toBe('| _id | name | score | ok | meta |\n| ---: | --- | ---: | --- | --- |\n| 2 | a \\| b<br>c | 2.5 | false |  |\n');
  });
});

describe('the streaming writer', () => {
  it('writes the same text as formatRecords, chunk by chunk', async () => {
    for (const format of ['json', 'ndjson', 'csv', 'markdown'] as const) {
      const chunks: string[] = [];
      const writer = createRecordWriter(format, fields, (text) => void chunks.push(text));
      for (const row of records) await writer.write(row);
      await writer.end();
      expect(chunks.join(''), format).toBe(await formatRecords(result(records), format));
      expect(chunks.length, format).toBeGreaterThan(records.length - 1);
    }
  });

  it('waits for the sink (backpressure) before taking the next record', async () => {
    const order: string[] = [];
    const writer = createRecordWriter('ndjson', fields, async (text) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      order.push(text);
    });
    await writer.write({ _id: 1 });
    order.push('after first');
    await writer.write({ _id: 2 });
    expect(order).toEqual(['{"_id":1}\n', 'after first', '{"_id":2}\n']);
  });
});

describe('table', () => {
  it('renders through the REPL table view, plain when colour is off', async () => {
    const text = await formatRecords(result(records.slice(3)), 'table', { width: 100, color: false });
    expect(text).toContain('plain, "quoted"');
    expect(text).toMatch(/1 of 1 record/);
    expect(text).not.toContain('\u001b[');
  });
});

describe('parseOutputFormat', () => {
  it('accepts every format in any case, and jsonl/md as aliases', () => {
    for (const format of outputFormats) expect(parseOutputFormat(format.toUpperCase())).toBe(format);
    expect(parseOutputFormat('jsonl')).toBe('ndjson');
    expect(parseOutputFormat('md')).toBe('markdown');
  });

  it('rejects anything else with a usage error listing the choices', () => {
    expect(() => parseOutputFormat('xml')).toThrow(ToolError);
    expect(() => parseOutputFormat('xml')).toThrow(/table, json, ndjson, csv, markdown/);
  });
});
