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

describe('number columns under every CKAN numeric type name', () => {
  const typed = (type: FieldInfo['type']): SearchResult => ({
    ...result([{ _id: 1, n: 4 }, { _id: 2, n: 12345 }]),
    fields: [{ id: '_id', type: 'int' }, { id: 'n', type }],
  });
  it.each(['int4', 'int8', 'float8', 'numeric'] as const)('%s is right-aligned in a table and in markdown', async (type) => {
    const table = await formatRecords(typed(type), 'table', { width: 100, color: false });
    const cells = table.split('\n').filter((line) => line.includes('│')).map((line) => line.split('│')[1] ?? '');
    // the header, then the two values: the short one padded on the left to the long one's width
    expect(cells[1]?.trimEnd()).toMatch(/^ +4$/);
    expect(cells[2]?.trim()).toBe('12345');
    expect(await formatRecords(typed(type), 'markdown')).toContain('| ---: | ---: |');
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

describe('hostile records', () => {
  it('csv can keep formula-like text as it is (--no-escape-formulas)', async () => {
    const text = await formatRecords(result([{ _id: 1, name: '+4712345678', score: 1, ok: true, meta: null }]), 'csv', { escapeFormulas: false });
    expect(text.split('\n')[1]).toBe('1,+4712345678,1,true,');
    const escaped = await formatRecords(result([{ _id: 1, name: '+4712345678', score: 1, ok: true, meta: null }]), 'csv');
    expect(escaped.split('\n')[1]).toBe("1,'+4712345678,1,true,");
  });

  it('fields named constructor, toString or __proto__ are read from the record, never inherited', async () => {
    const odd: FieldInfo[] = [
      { id: 'constructor', type: 'text' },
      { id: 'toString', type: 'text' },
      { id: 'hasOwnProperty', type: 'text' },
    ];
    const rows: Row[] = [{ toString: 'own' }];
    const of = (format: 'csv' | 'markdown' | 'table' | 'ndjson'): Promise<string> =>
      formatRecords({ ...result(rows), fields: odd }, format, { width: 80 });
    expect(await of('csv')).toBe('constructor,toString,hasOwnProperty\n,own,\n');
    expect(await of('markdown')).toContain('|  | own |  |');
    const table = await of('table');
    expect(table).toContain('own');
    expect(table).not.toContain('function');
  });

  it('a record nested 5,000 levels deep prints in json, ndjson, csv and table without a RangeError', async () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 5_000; level += 1) deep = [deep];
    const rows = [{ _id: 1, name: 'deep', score: 1, ok: true, meta: deep }] as unknown as Row[];
    for (const format of ['json', 'ndjson', 'csv', 'markdown', 'table'] as const) {
      const text = await formatRecords(result(rows), format, { width: 80, pretty: true });
      const quote = format === 'csv' ? '""' : '"';
      expect(text, format).toContain(format === 'table' ? '[[[[' : `${'['.repeat(5_000)}${quote}bottom${quote}${']'.repeat(5_000)}`);
    }
  });

  it('a table written record by record holds a bounded heap, however many records pass through', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const parts: string[] = [];
    const writer = createRecordWriter('table', fields, (text) => void parts.push(text), { width: 80 });
    gc();
    const before = process.memoryUsage().heapUsed;
    // 40,000 records of ≈ 700 bytes each: ≈ 28 MB if they were kept.
    for (let index = 0; index < 40_000; index += 1) {
      await writer.write({ _id: index, name: String(index).padStart(600, 'x'), score: index, ok: true, meta: null });
    }
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 2 ** 20;
    expect(grown).toBeLessThan(10);
    // The writer stays in use after the measurement, so what it holds is counted.
    await writer.end({ total: 40_000 });
    expect(parts.join('')).toContain('40000 of 40000 records');
  });

  it('a table written record by record keeps only the rows it draws, and says how many it left out', async () => {
    const parts: string[] = [];
    const writer = createRecordWriter('table', fields, (text) => void parts.push(text), { width: 80 });
    for (let index = 0; index < 20_000; index += 1) await writer.write({ _id: index, name: `n${index}`, score: 1, ok: true, meta: null });
    await writer.end({ total: 20_000 });
    const text = parts.join('');
    expect(text).toContain('20000 of 20000 records, 500 shown');
    expect(text).toContain('--format csv or ndjson prints all 20000');
    expect(text.split('\n').length).toBeLessThan(520);
  });
});

describe('facets', () => {
  const facets = {
    subject: { field: 'subject', values: [{ value: 'math', count: 8 }, { value: 'art | craft', count: 4 }, { value: '数学', count: 1 }], null_count: 2, more: true },
    credits: { field: 'credits', by: '2.5', values: [{ value: 5, count: 3 }], null_count: 0, more: false },
  };
  const withFacets: SearchResult = { ...result(records.slice(0, 1)), facets };

  it('draws a table per facet after the records, with bars of █ in proportion to the counts', async () => {
    const text = await formatRecords(withFacets, 'table', { width: 80 });
    const lines = text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('facet subject'));
    expect(lines[at]).toBe('facet subject: 3 values, the most common first; more exist (raise top to see them), 2 without a value');
    const bars = lines.slice(at + 2, at + 6).map((line) => line.split('│')[2]!.trim());
    // 8 is the longest bar (40 columns at most); 4 half of it; 1 an eighth; the 2 nulls a quarter
    expect(bars.map((b) => [...b].length)).toEqual([40, 20, 5, 10]);
    expect(bars[0]).toBe('█'.repeat(40));
    expect(lines[at + 4]).toMatch(/^ 数学 +│ +1 │ █████$/);
    expect(lines[at + 5]).toMatch(/^ ∅ +│ +2 │/);
    expect(text).toContain('facet credits by 2.5: 1 value\n');
  });

  it('puts a facets object beside the records in json', async () => {
    const parsed = JSON.parse(await formatRecords(withFacets, 'json')) as { records: unknown[]; facets: unknown };
    expect(parsed.records).toHaveLength(1);
    expect(parsed.facets).toEqual(facets);
    expect(JSON.parse(await formatRecords(withFacets, 'json', { pretty: true }))).toEqual(parsed);
  });

  it('writes Markdown tables after the records, and leaves csv and ndjson to records only', async () => {
    const markdown = await formatRecords(withFacets, 'markdown');
    expect(markdown).toContain('**facet subject** (more values not shown)\n\n| value | count |\n| --- | ---: |\n| math | 8 |\n| art \\| craft | 4 |');
    expect(markdown).toContain('| *null* | 2 |');
    expect(await formatRecords(withFacets, 'ndjson')).toBe(await formatRecords(result(records.slice(0, 1)), 'ndjson'));
    expect(await formatRecords(withFacets, 'csv')).toBe(await formatRecords(result(records.slice(0, 1)), 'csv'));
  });
});
