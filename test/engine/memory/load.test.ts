import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIsoTimestamp, resourceIdFor, tableFromRows, uuidV5 } from '../../../src/engine/memory/load.js';
import { loadResources } from '../../../src/engine/node/load-resources.js';
import { evaluate } from '../../../src/engine/memory/evaluate.js';
import { ToolError } from '../../../src/errors.js';
import type { Filters, SearchRequest, Table } from '../../../src/datastore/types.js';
import { rowsFromColumns } from '../../../src/engine/memory/row-shape.js';
import { runNodeProgram } from '../../helpers/node-program.js';
import { repoRoot } from '../../cli/run-ckql.js';

let dir: string;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckql-load-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes files into a fresh folder and returns its path. */
async function folder(files: Record<string, string>): Promise<string> {
  const path = join(dir, `case-${n++}`);
  await mkdir(path);
  for (const [name, content] of Object.entries(files)) await writeFile(join(path, name), content);
  return path;
}

async function one(name: string, content: string): Promise<Table> {
  const path = await folder({ [name]: content });
  const [table] = await loadResources(join(path, name));
  return table as Table;
}

async function loadError(paths: string | string[], options?: { private?: string[] }): Promise<ToolError> {
  try {
    await loadResources(paths, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected a ToolError');
}

const types = (table: Table): Record<string, string> => Object.fromEntries(table.fields.map((f) => [f.id, f.type]));

describe('CSV', () => {
  test('types are inferred over all non-empty cells; an empty cell is null', async () => {
    const table = await one(
      'courses.csv',
      [
        'title,year,score,active,start,code,blank,mixed',
        'Algebra,2020,1.5,true,2020-09-01,007,,1',
        'Poetry,2021,-2,FALSE,2021-01-31T08:30:00Z,12,,x',
        'Geometry,,3e2,,2021-02-01 10:00,5,,2',
      ].join('\n'),
    );
    expect(types(table)).toEqual({
      _id: 'int', title: 'text', year: 'int4', score: 'numeric', active: 'bool', start: 'timestamp', code: 'text', blank: 'text', mixed: 'text',
    });
    // Timestamps as CKAN writes them: `T`, seconds, no zone (PostgreSQL's timestamp drops it).
    expect(table.rows).toEqual([
      { _id: 1, title: 'Algebra', year: 2020, score: 1.5, active: true, start: '2020-09-01T00:00:00', code: '007', blank: null, mixed: '1' },
      { _id: 2, title: 'Poetry', year: 2021, score: -2, active: false, start: '2021-01-31T08:30:00', code: '12', blank: null, mixed: 'x' },
      { _id: 3, title: 'Geometry', year: null, score: 300, active: null, start: '2021-02-01T10:00:00', code: '5', blank: null, mixed: '2' },
    ]);
    expect(Object.keys(table.rows[0] ?? {})).toEqual(table.fields.map((f) => f.id));
  });

  test('a timestamp keeps one text per moment: its fraction without trailing zeros, as PostgreSQL writes it', async () => {
    const table = await one('moments.csv', ['at', '2020-01-01T10:00:00.500', '2020-01-01 10:00:00.5', '2020-01-01T10:00:00.000', '2020-01-01T10:00', '2020-01-01T10:00:00.0125'].join('\n'));
    expect(table.rows.map((row) => row['at'])).toEqual(['2020-01-01T10:00:00.5', '2020-01-01T10:00:00.5', '2020-01-01T10:00:00', '2020-01-01T10:00:00', '2020-01-01T10:00:00.0125']);
    // so grouping sees two moments, not four spellings
    const groups = evaluate({ resource_id: table.id, distinct: true, fields: ['at'], sort: 'at' } as SearchRequest, table).records;
    expect(groups).toEqual([{ at: '2020-01-01T10:00:00' }, { at: '2020-01-01T10:00:00.0125' }, { at: '2020-01-01T10:00:00.5' }]);
  });

  test('integers: int4 within its range, int8 beyond it, exact beyond 2^53; dates are date', async () => {
    const table = await one('n.csv', ['small,big,huge,day', '1,2147483648,9007199254740993,2020-01-31', '-2147483648,-5,123456789012345678901234,2021-02-01'].join('\n'));
    expect(types(table)).toEqual({ _id: 'int', small: 'int4', big: 'int8', huge: 'numeric', day: 'date' });
    expect(table.rows[0]).toEqual({ _id: 1, small: 1, big: 2147483648, huge: '9007199254740993', day: '2020-01-31' });
    expect(table.rows[1]?.huge).toBe('123456789012345678901234');
    // int8 beyond 2^53 is kept as its exact text too
    expect((await one('i8.csv', 'n\n9007199254740993\n1\n')).rows).toEqual([{ _id: 1, n: '9007199254740993' }, { _id: 2, n: 1 }]);
  });

  test('the delimiter ignores what is inside a quoted header cell', async () => {
    const table = await one('quoted.csv', '"a;b;c",d\n1,2\n');
    expect(table.fields.map((f) => f.id)).toEqual(['_id', 'a;b;c', 'd']);
    expect(table.rows).toEqual([{ _id: 1, 'a;b;c': 1, d: 2 }]);
  });

  test('BOM, CRLF, quoted commas, quotes and newlines', async () => {
    const table = await one('q.csv', '\uFEFFname,note\r\n"Smith, J.","said ""hi""\r\nthen left"\r\nplain,x\r\n');
    expect(table.fields.map((f) => f.id)).toEqual(['_id', 'name', 'note']);
    expect(table.rows).toEqual([
      { _id: 1, name: 'Smith, J.', note: 'said "hi"\r\nthen left' },
      { _id: 2, name: 'plain', note: 'x' },
    ]);
  });

  test('semicolon and tab delimiters are read from the header; stray quotes in a cell are text', async () => {
    expect((await one('semi.csv', 'name;price\n"A; B";1,5\nC;2\n')).rows).toEqual([
      { _id: 1, name: 'A; B', price: '1,5' },
      { _id: 2, name: 'C', price: '2' },
    ]);
    expect((await one('tabs.csv', 'a\tb\nx,y\t1\n')).rows).toEqual([{ _id: 1, a: 'x,y', b: 1 }]);
    expect((await one('inch.csv', 'item,size\nscreen,15" wide\n')).rows).toEqual([{ _id: 1, item: 'screen', size: '15" wide' }]);
  });

  test('a header only gives an empty table; a file\'s own _id column is kept, the rows in _id order', async () => {
    expect((await one('h.csv', 'a,b\n')).rows).toEqual([]);
    const dump = await one('dump.csv', '_id,a\n7,x\n9,y\n');
    expect(dump.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'a', type: 'text' }]);
    expect(dump.rows).toEqual([{ _id: 7, a: 'x' }, { _id: 9, a: 'y' }]);
    // out of order in the file: the table (and every default order) goes by _id
    expect((await one('shuffled.csv', 'a,_id\nx,9\ny, 7 \nz,-3\n')).rows).toEqual([{ _id: -3, a: 'z' }, { _id: 7, a: 'y' }, { _id: 9, a: 'x' }]);
    expect((await one('ids.json', '[{"_id": 4, "a": "x"}, {"a": "y", "_id": "2"}]')).rows).toEqual([{ _id: 2, a: 'y' }, { _id: 4, a: 'x' }]);
    expect((await one('ids.ndjson', '{"_id": 1, "a": "x"}\n{"_id": 2}\n')).rows).toEqual([{ _id: 1, a: 'x' }, { _id: 2, a: null }]);
  });

  test.each([
    ['dump.csv', '_id,a\n7,x\nseven,y\n', 'record 2 has the _id "seven"'],
    ['dump.csv', '_id,a\n7,x\n1.5,y\n', 'record 2 has the _id "1.5"'],
    ['dump.csv', '_id,a\n7,x\n,y\n', 'record 2 has no _id'],
    ['dump.csv', '_id,a\n3000000000,x\n', 'record 1 has the _id "3000000000"'],
    ['dump.csv', '_id,a\n7,x\n8,y\n7,z\n', 'record 3 has the _id 7, as record 1 has'],
    ['dump.json', '[{"_id": 1}, {"a": 2}]', 'record 2 has no _id'],
    ['dump.ndjson', '{"a": 1}\n{"_id": 5}\n', 'record 1 has no _id'],
    ['dump.json', '[{"_id": 2}, {"_id": 2.0}]', 'record 2 has the _id 2, as record 1 has'],
    ['dump.json', '[{"_id": [1]}]', 'record 1 has the _id [1]'],
  ])('%s %j: an _id that is no whole number, or is given twice, is DATA_INVALID naming the file and the record', async (name, content, says) => {
    const path = await folder({ [name]: content });
    const error = await loadError(join(path, name));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.file).toBe(join(path, name));
    expect(error.message).toContain(name);
    expect(error.message).toContain(says);
  });

  test('a record with the wrong number of cells is DATA_INVALID with its line', async () => {
    const path = await folder({ 'bad.csv': 'a,b\n1,2\n3,4\n5\n' });
    const error = await loadError(join(path, 'bad.csv'));
    expect(error.code).toBe('DATA_INVALID');
    expect(error.line).toBe(4);
    expect(error.file).toBe(join(path, 'bad.csv'));
    expect(error.message).toContain('bad.csv');
  });

  test('an unclosed quote is DATA_INVALID', async () => {
    const path = await folder({ 'open.csv': 'a,b\n1,"2\n3,4\n' });
    const error = await loadError(path);
    expect(error.code).toBe('DATA_INVALID');
    expect(error.line).toBeGreaterThanOrEqual(2);
  });

  test('an empty file, a nameless or doubled header column', async () => {
    expect((await loadError(join(await folder({ 'e.csv': '' }), 'e.csv'))).code).toBe('DATA_INVALID');
    const nameless = await loadError(await folder({ 'n.csv': 'a,,c\n1,2,3\n' }));
    expect([nameless.code, nameless.line]).toEqual(['DATA_INVALID', 1]);
    const doubled = await loadError(await folder({ 'd.csv': 'a,b,a\n1,2,3\n' }));
    expect(doubled.message).toContain('"a"');
  });

  test('repeated texts share one string copy (compact tables)', async () => {
    const table = await one('r.csv', 'k\n' + 'same\n'.repeat(3));
    expect(table.rows.map((r) => r.k)).toEqual(['same', 'same', 'same']);
  });
});

describe('JSON and NDJSON', () => {
  test('a .json array of objects: union of keys, missing → null, types from values', async () => {
    const table = await one(
      'items.json',
      JSON.stringify([
        { id: 1, price: 2, when: '2020-01-01', tags: ['a'], ok: true, note: 'x' },
        { id: 2, price: 2.5, when: '2020-01-02T10:00:00', meta: { a: 1 }, note: 3 },
      ]),
    );
    expect(types(table)).toEqual({ _id: 'int', id: 'int4', price: 'numeric', when: 'timestamp', tags: '_text', ok: 'bool', note: 'text', meta: 'json' });
    expect(table.rows[0]?.when).toBe('2020-01-01T00:00:00');
    expect(table.rows[1]).toEqual({ _id: 2, id: 2, price: 2.5, when: '2020-01-02T10:00:00', tags: null, ok: null, note: 3, meta: { a: 1 } });
  });

  test('arrays of one kind are CKAN array types; big integers int8; a value nested too deep is refused', async () => {
    const table = await one('arr.json', JSON.stringify([{ n: [1, 2], x: [1.5], b: [true], m: [1, 'a'], big: 3_000_000_000 }, { n: null, x: [], b: [false], m: [], big: 1 }]));
    expect(types(table)).toEqual({ _id: 'int', n: '_int4', x: '_numeric', b: '_bool', m: 'json', big: 'int8' });
    let deep = '1';
    for (let i = 0; i < 20_000; i++) deep = `[${deep}]`;
    const path = await folder({ 'deep.json': `[{"a":${deep}}]` });
    const error = await loadError(path);
    expect(error.code).toBe('DATA_INVALID');
    expect(error.message).toMatch(/nested more than 1000 levels deep/);
  });

  test('an integer beyond 2^53 in a .json or .ndjson file is kept digit for digit, as a CSV cell is', async () => {
    // JSON.parse alone reads 9007199254740993 as 9007199254740992; the CSV loader keeps the text
    const csv = await one('exact.csv', 'n,small\n9007199254740993,1\n-12345678901234567890,2\n');
    const json = await one('exact.json', '[{"n": 9007199254740993, "small": 1, "inner": {"k": 9007199254740993}}, {"n": -12345678901234567890, "small": 2, "inner": null}]');
    const ndjson = await one('exact.ndjson', '{"n": 9007199254740993, "small": 1}\n{"n": -12345678901234567890, "small": 2}\n');
    for (const table of [json, ndjson]) {
      expect(table.rows.map((row) => [row['n'], row['small']])).toEqual(csv.rows.map((row) => [row['n'], row['small']]));
      expect(types(table)['n']).toBe(types(csv)['n']);
    }
    expect(types(csv)['n']).toBe('numeric');
    expect(csv.rows[0]?.['n']).toBe('9007199254740993');
    // beyond int4 and within int8: int8, as in CSV
    const wide = await one('wide.ndjson', '{"n": 9007199254740993}\n{"n": 1}\n');
    expect([types(wide)['n'], wide.rows[0]?.['n']]).toEqual(['int8', '9007199254740993']);
    // a number inside a json value stays a number (JSON.parse's), never a text
    expect(json.rows[0]?.['inner']).toEqual({ k: 9007199254740992 });
  });

  test('.ndjson and .jsonl: one object per line, blank lines skipped, CRLF fine', async () => {
    const path = await folder({ 'a.ndjson': '{"x":1}\r\n\r\n{"x":2,"y":"b"}\r\n', 'b.jsonl': '{"z":true}\n' });
    const [a, b] = await loadResources(path);
    expect(a?.rows).toEqual([{ _id: 1, x: 1, y: null }, { _id: 2, x: 2, y: 'b' }]);
    expect(b?.rows).toEqual([{ _id: 1, z: true }]);
  });

  test('a bad NDJSON line is DATA_INVALID with its line number', async () => {
    const path = await folder({ 'bad.ndjson': '{"x":1}\n{"x":\n' });
    const error = await loadError(path);
    expect([error.code, error.line]).toEqual(['DATA_INVALID', 2]);
    const notObject = await loadError(await folder({ 'arr.jsonl': '{"x":1}\n\n[1,2]\n' }));
    expect([notObject.code, notObject.line]).toEqual(['DATA_INVALID', 3]);
  });

  test('bad JSON: not parsable (with a line when the engine tells), not an array, an element not an object', async () => {
    const broken = await loadError(await folder({ 'b.json': '[\n{"a":1},\n{"a":}\n]' }));
    expect(broken.code).toBe('DATA_INVALID');
    if (broken.line !== undefined) expect(broken.line).toBe(3);
    expect((await loadError(await folder({ 'o.json': '{"a":1}' }))).message).toContain('array of objects');
    expect((await loadError(await folder({ 'e.json': '[{"a":1}, 2]' }))).message).toContain('element 2');
  });

  test('a BOM before JSON is fine', async () => {
    expect((await one('bom.json', '\uFEFF[{"a":1}]')).rows).toEqual([{ _id: 1, a: 1 }]);
  });

  test('a .json array is read element by element as it streams: the same records as JSON.parse of the whole file', async () => {
    // strings holding brackets, commas, quotes and escapes; nested arrays and objects; records far
    // longer than a read chunk (64 KiB), so elements and strings are cut across chunks
    const records = Array.from({ length: 400 }, (_, i) => ({
      id: i,
      text: `a "quoted ], [ {, } \\ \u00e9 ${'x'.repeat(i % 7 === 0 ? 70_000 : 10)}`,
      nested: { list: [[i], { deep: ['}', ']'] }], empty: {} },
      none: null,
    }));
    const text = `  \n[\n${records.map((r, i) => (i % 2 === 0 ? JSON.stringify(r) : JSON.stringify(r, null, 2))).join(' ,\n')}\n]\n\n`;
    const table = await one('big.json', text);
    expect(table.rows.map(({ _id: _ignored, ...rest }) => rest)).toEqual(JSON.parse(text));
    expect((await one('empty.json', ' [ ] ')).rows).toEqual([]);
  });

  test('a .json file that is not one array of objects is refused with what is wrong and the line', async () => {
    const cases: [string, string, number][] = [
      ['[{"a":1},,{"a":2}]', 'an empty element', 1],
      ['[{"a":1},\n]', 'an empty element', 2],
      ['[{"a":1}\n', 'not closed', 2],
      ['[{"a":1}] x', 'text after the array', 1],
      ['', 'the file is empty', 1],
      ['[{"a":1},\n{"a": tru}]', 'element 2', 2],
    ];
    for (const [text, message, line] of cases) {
      const error = await loadError(await folder({ 'bad.json': text }));
      expect([error.code, error.line]).toEqual(['DATA_INVALID', line]);
      expect(error.message).toContain(message);
    }
  });
});

describe('resources', () => {
  test('a directory: data files sorted by name, others and hidden files skipped, not recursive', async () => {
    const path = await folder({ 'b.csv': 'x\n1\n', 'a.json': '[]', 'README.md': '# hi', '.hidden.csv': 'x\n', 'c.jsonl': '' });
    await mkdir(join(path, 'sub'));
    await writeFile(join(path, 'sub', 'd.csv'), 'x\n1\n');
    const tables = await loadResources(path);
    expect(tables.map((t) => t.aliases)).toEqual([['a'], ['b'], ['c']]);
    expect(tables.map((t) => t.source)).toEqual([join(path, 'a.json'), join(path, 'b.csv'), join(path, 'c.jsonl')]);
  });

  test('ids are stable name-based UUIDs of the alias', async () => {
    const [table] = await loadResources(await folder({ 'courses.csv': 'a\n1\n' }));
    expect(table?.id).toBe(resourceIdFor('courses'));
    expect(resourceIdFor('courses')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(resourceIdFor('courses')).not.toBe(resourceIdFor('Courses'));
    // the fixed namespace makes the id the same on every machine and version
    expect(resourceIdFor('courses')).toBe('4798d5aa-c4aa-5898-9155-fd6473584fb2');
  });

  test('uuidV5 follows RFC 4122 (the DNS example)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  test('private names mark tables by alias or id; an unknown one is a usage error', async () => {
    const path = await folder({ 'open.csv': 'a\n1\n', 'secret.csv': 'a\n2\n', 'other.csv': 'a\n3\n' });
    const tables = await loadResources(path, { private: ['secret', resourceIdFor('other')] });
    expect(tables.map((t) => [t.aliases[0], t.private === true])).toEqual([['open', false], ['other', true], ['secret', true]]);
    expect((await loadError(path, { private: ['nope'] })).code).toBe('USAGE');
  });

  test('several paths, files and directories', async () => {
    const a = await folder({ 'x.csv': 'a\n1\n' });
    const b = await folder({ 'y.json': '[{"b":2}]' });
    const tables = await loadResources([a, join(b, 'y.json')]);
    expect(tables.map((t) => t.aliases[0])).toEqual(['x', 'y']);
  });

  test('errors: missing path, unsupported file, a directory without data, one alias twice', async () => {
    const missing = await loadError(join(dir, 'does-not-exist'));
    expect([missing.code, missing.file]).toEqual(['DATA_NOT_FOUND', join(dir, 'does-not-exist')]);
    const txt = await folder({ 'notes.txt': 'x' });
    expect((await loadError(join(txt, 'notes.txt'))).code).toBe('DATA_UNSUPPORTED');
    expect((await loadError(txt)).code).toBe('DATA_INVALID');
    const twice = await loadError(await folder({ 'a.csv': 'x\n1\n', 'a.json': '[]' }));
    expect(twice.code).toBe('DATA_DUPLICATE_ALIAS');
    expect(twice.message).toContain('"a"');
  });

  test('onBadFile: every file that cannot be read is reported with its file and line and skipped; the others load', async () => {
    const path = await folder({
      'a.csv': 'x\n1\n',
      'b.csv': 'x,y\n1,2\n3,4,5\n',
      'c.json': '[{"x": 1},',
      'c.csv': 'x\n2\n',
      'd.ndjson': '{"x": 1}\nnot json\n',
      'e.json': '[{"x": 3}]',
    });
    // without it, the first bad file stops the load
    expect((await loadError(path)).code).toBe('DATA_DUPLICATE_ALIAS');
    const bad: ToolError[] = [];
    const tables = await loadResources(path, { onBadFile: (error) => bad.push(error) });
    expect(tables.map((t) => t.aliases[0])).toEqual(['a', 'c', 'e']);
    expect(tables.map((t) => t.source)).toEqual([join(path, 'a.csv'), join(path, 'c.csv'), join(path, 'e.json')]);
    expect(bad.map((e) => [e.code, e.file, e.line])).toEqual([
      ['DATA_DUPLICATE_ALIAS', join(path, 'c.json'), undefined],
      ['DATA_INVALID', join(path, 'b.csv'), 3],
      ['DATA_INVALID', join(path, 'd.ndjson'), 2],
    ]);
  });

  test('a loaded table evaluates', async () => {
    const table = await one('c.csv', 'subject,year\nmath,2020\narts,2021\nmath,2021\n');
    const result = evaluate({ resource_id: 'c', filters: { subject: 'math', year: '2021' } }, table);
    expect(result.records).toEqual([{ _id: 3, subject: 'math', year: 2021 }]);
    expect(result.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'subject', type: 'text' }, { id: 'year', type: 'int4' }]);
  });
});

describe('tableFromRows', () => {
  test('infers fields, fills missing keys with null, numbers rows from 1 (or keeps their own _id), leaves the input alone', () => {
    const input = [{ title: 'Algebra', year: 2020 }, { title: 'Poetry' }];
    const copy = structuredClone(input);
    const table = tableFromRows(input, { alias: 'courses' });
    expect(table.id).toBe(resourceIdFor('courses'));
    expect(table.aliases).toEqual(['courses']);
    expect(table.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'title', type: 'text' }, { id: 'year', type: 'int4' }]);
    expect(table.rows).toEqual([{ _id: 1, title: 'Algebra', year: 2020 }, { _id: 2, title: 'Poetry', year: null }]);
    expect(input).toEqual(copy);
    const keyed = [{ title: 'Algebra', _id: 99 }, { _id: 5, title: 'Poetry' }];
    expect(tableFromRows(keyed).rows).toEqual([{ _id: 5, title: 'Poetry' }, { _id: 99, title: 'Algebra' }]);
    expect(() => tableFromRows([{ title: 'Algebra', _id: 99 }, { title: 'Poetry' }], { alias: 'courses' })).toThrow('courses: record 2 has no _id');
  });

  test('an explicit id wins; keys like __proto__ and constructor become ordinary fields', () => {
    const input = JSON.parse('[{"__proto__": 1, "constructor": "c"}]') as Record<string, unknown>[];
    const table = tableFromRows(input as never, { id: 'my-id' });
    expect(table.id).toBe('my-id');
    expect(table.fields.map((f) => f.id)).toEqual(['_id', '__proto__', 'constructor']);
    const row = table.rows[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(1);
    expect(evaluate({ resource_id: 'x', filters: JSON.parse('{"__proto__": 1}') as Filters }, table).total).toBe(1);
  });

  test('wide rows (many columns) load and evaluate', () => {
    const wide = Array.from({ length: 3 }, (_, r) => Object.fromEntries(Array.from({ length: 300 }, (_, c) => [`c${c}`, r * 1000 + c])));
    const table = tableFromRows(wide, {});
    expect(table.fields).toHaveLength(301);
    expect(evaluate({ resource_id: 'w', filters: { c299: 2299 }, fields: ['c0'] }, table).records).toEqual([{ c0: 2000 }]);
  });
});

describe('isIsoTimestamp', () => {
  test.each([
    ['2020-01-31', true], ['2020-02-29', true], ['2021-02-29', false], ['2020-13-01', false], ['2020-1-1', false],
    ['2020-01-31T23:59:59.123Z', true], ['2020-01-31 08:00', true], ['2020-01-31T24:00', false], ['2020-01-31T10:00+02:00', true],
    ['2020-01-31T10:00:61', false], ['20200131', false], ['today', false], ['1900-02-29', false], ['2000-02-29', true],
  ])('%s → %s', (text, expected) => {
    expect(isIsoTimestamp(text)).toBe(expected);
  });
});

describe('encoded text columns handed to the evaluator', () => {
  // 200 rows: status repeats (encoded), note is unique (more distinct texts than a quarter of the rows)
  const data = Array.from({ length: 200 }, (_, i) => ({
    status: ['failed', 'passed', null, 'Withdrawn'][i % 4] ?? null,
    note: `note ${i}`,
    grade: i % 7,
    day: `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`,
  }));
  const csv = ['status,note,grade,day', ...data.map((d) => `${d.status ?? ''},${d.note},${d.grade},${d.day}`)].join('\n') + '\n';
  const idsWhere = (keep: (d: (typeof data)[number]) => boolean): number[] => data.flatMap((d, i) => (keep(d) ? [i + 1] : []));

  test('a loaded CSV answers its first requests as its later ones', async () => {
    const table = await one('grades.csv', csv);
    const requests: Omit<SearchRequest, 'resource_id'>[] = [
      { filters: { status: ['failed', 'Withdrawn'] }, sort: 'day desc', limit: 7 },
      { filters: { status: [null] }, fields: ['_id'], limit: 3 },
      { filters: { note: 'note 17' } },
      { q: 'withdrawn', filters: { grade: 3 }, fields: ['_id', 'status'] },
      { q: 'NOTE 19', fields: ['_id', 'status'] },
    ];
    const first = requests.map((r) => evaluate({ resource_id: table.id, ...r }, table));
    const later = requests.map((r) => evaluate({ resource_id: table.id, ...r }, table));
    expect(later).toEqual(first);
    expect(first[0]?.total).toBe(100);
    const days = first[0]?.records.map((r) => r.day as string) ?? [];
    expect(days).toEqual([...days].sort().reverse());
    expect(days[0]).toBe('2024-01-28');
    expect(first[1]?.records).toEqual(idsWhere((d) => d.status === null).slice(0, 3).map((id) => ({ _id: id })));
    expect(first[2]?.records.map((r) => r._id)).toEqual([18]);
    expect(first[3]?.records.map((r) => r._id)).toEqual(idsWhere((d) => d.grade === 3 && d.status === 'Withdrawn'));
    expect(first[4]?.records.map((r) => r._id)).toEqual(idsWhere((d) => d.note.includes('note 19')));
  });
});

describe('rows built from a block of column values', () => {
  /**
   * Rows 2 and 3 of three built from a block, odd keys among them, each as its keys, values and prototype. It names
   * nothing but its argument, so its text runs in the child as it runs here.
   */
  const rowsOfBlock = (build: typeof rowsFromColumns): unknown => {
    const out: unknown[] = new Array(3).fill(null);
    build(['_id', 'a', '__proto__', 'constructor'])(out, 1, 3, [7, 8, 9], [['x', 'y'], [1, null], [true, false]]);
    return out.map((row) => (row === null ? null : [Object.keys(row as object), Object.values(row as object), Object.getPrototypeOf(row) === Object.prototype]));
  };

  test('the generated loop and the closures (node --disallow-code-generation-from-strings) write the same rows, odd keys as own keys', () => {
    const shape = join(repoRoot, 'src/engine/memory/row-shape.ts');
    const expected = [null, [['_id', 'a', '__proto__', 'constructor'], [8, 'x', 1, true], true], [['_id', 'a', '__proto__', 'constructor'], [9, 'y', null, false], true]];
    // the generated loop in this process; the closures in a child where code generation is refused
    expect(rowsOfBlock(rowsFromColumns)).toEqual(expected);
    const program = `import { rowsFromColumns } from ${JSON.stringify(shape)};
console.log(JSON.stringify((${rowsOfBlock.toString()})(rowsFromColumns)));`;
    expect(JSON.parse(runNodeProgram(program, ['--disallow-code-generation-from-strings']))).toEqual(expected);
    const out: unknown[] = [undefined];
    rowsFromColumns(['_id', 'n'])(out, 0, 1, undefined, [[5]]);
    expect(out).toEqual([{ _id: 1, n: 5 }]);
  });
});

describe('an aborted signal stops a load', () => {
  const lines = 8000;
  const files = {
    csv: ['n,word', ...Array.from({ length: lines }, (_, i) => `${i},word number ${i}`)].join('\n'),
    json: `[${Array.from({ length: lines }, (_, i) => JSON.stringify({ n: i, word: `word number ${i}` })).join(',\n')}]`,
    ndjson: Array.from({ length: lines }, (_, i) => JSON.stringify({ n: i, word: `word number ${i}` })).join('\n'),
  };

  test.each(Object.keys(files) as (keyof typeof files)[])('%s: aborted after its first chunk, before its first file, and untouched', async (ext) => {
    const folder = join(dir, `abort-${ext}`);
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `many.${ext}`), files[ext]);
    // Each file is several chunks of 64 KiB: the progress of the first aborts, the next chunk stops the load.
    const controller = new AbortController();
    const chunks: number[] = [];
    const load = loadResources(folder, {
      signal: controller.signal,
      onProgress: ({ bytes }) => {
        chunks.push(bytes);
        controller.abort();
      },
    });
    await expect(load).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringContaining('was interrupted; nothing of it was kept') as string });
    expect(chunks.length).toBeLessThan(4);
    const before = new AbortController();
    before.abort();
    await expect(loadResources(folder, { signal: before.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    // A signal not aborted changes nothing.
    const [table] = await loadResources(folder, { signal: new AbortController().signal });
    expect(table?.rows).toHaveLength(lines);
  });
});
