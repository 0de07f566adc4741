/**
 * `loadFiles`: a CSV file streamed into a PostgreSQL datastore: types
 * inferred chunk by chunk as the memory loader infers them over the whole
 * file, cells copied as written (a numeric keeps its scale), progress per
 * batch, and an interrupted load that leaves nothing (or the table it was
 * replacing) behind.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatastoreError, ToolError } from '../../../src/errors.js';
import { loadResources } from '../../../src/engine/node/load-resources.js';
import { loadFiles } from '../../../src/engine/sql/load-files.js';
import { openEngine } from '../../../src/engine/open.js';
import type { LoadProgress } from '../../../src/engine/sql/load.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines } from './engines.js';

const dir = mkdtempSync(join(tmpdir(), 'ckql-load-files-'));

// 2,001 rows, the last of which widens every column's type: the type pass must see the whole file before the table is made.
const wide = join(dir, 'wide.csv');
{
  let text = 'n,maybe,when,label\n';
  for (let i = 1; i <= 2000; i++) text += `${i},,2020-01-${String(1 + (i % 28)).padStart(2, '0')},row ${i}\n`;
  text += '7.50,TRUE,2020-02-01T10:30:00,"last, ""quoted"""\n';
  writeFileSync(wide, text);
}
const prices = join(dir, 'prices.csv');
writeFileSync(prices, '_id,item,price\n9,tea,7.50\n8,cake,2.0\n7,big,9007199254740993\n6,none,\n');
// A spreadsheet's export: a byte-order mark, `;` between cells, CRLF line ends, a quoted cell with a line break.
const european = join(dir, 'european.csv');
writeFileSync(european, '\uFEFFname;amount;note\r\nTee;3;"zwei\r\nZeilen"\r\nKuchen;12;\r\n');
// NDJSON: every kind of value, keys in varying order and missing, a blank line, a BOM and CRLF.
const events = join(dir, 'events.ndjson');
writeFileSync(
  events,
  '\uFEFF' +
    [
      { n: 1, big: 1, price: 7.5, ok: true, day: '2020-01-02', at: '2020-01-02', tags: ['a', 'b'], meta: { k: [1, 2] }, mixed: 'x' },
      { big: 2 ** 40, n: 2, price: 3, ok: false, day: '2021-12-31', at: '2020-01-02T10:30:00+02:00', tags: [], meta: [1, 'two'], mixed: 5 },
      { n: null, extra: 'late key', tags: null },
    ]
      .map((r) => JSON.stringify(r))
      .join('\r\n\r\n') +
    '\r\n',
);
// The same records as a JSON array (`ckql load` streams it element by element).
const eventsArray = join(dir, 'events-array.json');
writeFileSync(eventsArray, JSON.stringify(JSON.parse(`[${[...new Set(readFileSync(events, 'utf8').replace('\uFEFF', '').split(/\r?\n/))].filter((l) => l !== '').join(',')}]`), null, 2));
const badLine = join(dir, 'bad.ndjson');
writeFileSync(badLine, '{"a":1}\n\n[1,2]\n');
const broken = join(dir, 'broken.csv');
writeFileSync(broken, 'a,b\n1,2\n3,4,5\n');

let engines: TestEngines;
beforeAll(async () => {
  engines = await openTestEngines([]);
});
afterAll(async () => {
  await engines?.close();
});

describe.each(engineNames)('%s', (name) => {
  it('infers the types the memory loader infers over the whole file', async () => {
    const engine = engines.get(name);
    const progress: LoadProgress[] = [];
    const loaded = await loadFiles(engine.db, [wide], { replace: true, indexes: false, batchRows: 800, onProgress: (p) => progress.push(p) });
    await engine.refresh();
    expect(loaded).toEqual([{ id: expect.any(String), alias: 'wide', rows: 2001 }]);
    const [memory] = await loadResources(wide);
    const fields = (await engine.resource('wide'))?.fields;
    expect(fields).toEqual(memory?.fields);
    expect(fields?.map((f) => f.type)).toEqual(['int', 'numeric', 'bool', 'timestamp', 'text']);
    // The type pass reports the share of the file read; then each COPY batch its rows of the total.
    const reading = progress.filter((p) => p.reading !== undefined);
    expect(reading.length).toBeGreaterThan(0);
    expect(reading.every((p) => (p.reading?.bytes ?? 0) > 0 && (p.reading?.bytes ?? 0) <= statSync(wide).size && p.reading?.totalBytes === statSync(wide).size)).toBe(true);
    const copying = progress.filter((p) => p.reading === undefined);
    expect(copying.map((p) => p.rows)).toEqual([800, 1600, 2001]);
    expect(copying.every((p) => p.totalRows === 2001 && p.resource === 'wide')).toBe(true);
    // Reading comes first, copying after.
    expect(progress.findIndex((p) => p.reading === undefined)).toBe(reading.length);
    const last = await engine.search({ resource_id: 'wide', sort: '_id desc', limit: 1 });
    expect(last.records).toEqual([{ _id: 2001, n: '7.50', maybe: true, when: '2020-02-01T10:30:00', label: 'last, "quoted"' }]);
  });

  it('copies cells as written: scale and digits kept, empty cells null, the file\'s own _id kept', async () => {
    const engine = engines.get(name);
    await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias: 'priced' });
    await engine.refresh();
    const result = await engine.search({ resource_id: 'priced' });
    expect(result.records).toEqual([
      { _id: 6, item: 'none', price: null },
      { _id: 7, item: 'big', price: '9007199254740993' },
      { _id: 8, item: 'cake', price: '2.0' },
      { _id: 9, item: 'tea', price: '7.50' },
    ]);
    // the memory loader keeps the same _id values, in the same order
    const [loaded] = await loadResources(prices);
    expect(loaded!.rows.map((r) => [r['_id'], r['item']])).toEqual(result.records.map((r) => [r['_id'], r['item']]));
    // and the sequence goes on after the largest, as after CKAN's own inserts
    const table = `"${(await engine.resource('priced'))!.id}"`;
    const next = await engine.db.transaction((tx) => tx.query(`SELECT nextval(pg_get_serial_sequence($1, '_id')) AS n`, [table]));
    expect(Number(next.rows[0]!['n'])).toBe(10);
  });

  it('keeps the _id of NDJSON and JSON records, and refuses an _id that is no whole number or is given twice, naming the file and record', async () => {
    const engine = engines.get(name);
    const keyed = join(dir, 'keyed.ndjson');
    writeFileSync(keyed, '{"_id": 30, "a": "x"}\n{"a": "y", "_id": "10"}\n{"_id": 20}\n');
    await loadFiles(engine.db, [keyed], { replace: true, indexes: false });
    await engine.refresh();
    expect((await engine.search({ resource_id: 'keyed' })).records).toEqual([{ _id: 10, a: 'y' }, { _id: 20, a: null }, { _id: 30, a: 'x' }]);
    for (const [file, content, says] of [
      ['twice.csv', '_id,a\n1,x\n2,y\n1,z\n', 'record 3 has the _id 1, as record 1 has'],
      ['word.csv', '_id,a\n1,x\nb,y\n', 'record 2 has the _id "b"'],
      ['missing.ndjson', '{"_id": 1}\n{"a": 2}\n', 'record 2 has no _id'],
    ] as const) {
      const path = join(dir, file);
      writeFileSync(path, content);
      const error = await loadFiles(engine.db, [path], { replace: true, indexes: false }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ToolError);
      expect({ code: (error as ToolError).code, file: (error as ToolError).file }).toEqual({ code: 'DATA_INVALID', file: path });
      expect((error as ToolError).message).toContain(says);
    }
  });

  it('reads a spreadsheet\'s CSV (BOM, `;`, CRLF, a line break in a cell) as the memory loader does', async () => {
    const engine = engines.get(name);
    await loadFiles(engine.db, [european], { replace: true, indexes: false });
    await engine.refresh();
    const [memory] = await loadResources(european);
    expect((await engine.resource('european'))?.fields).toEqual(memory?.fields);
    expect((await engine.search({ resource_id: 'european' })).records).toEqual(memory?.rows.map((row) => ({ ...row })));
  });

  it('streams an NDJSON file with the memory loader\'s types and values', async () => {
    const engine = engines.get(name);
    const progress: LoadProgress[] = [];
    const loaded = await loadFiles(engine.db, [events], { replace: true, indexes: false, onProgress: (p) => progress.push(p) });
    await engine.refresh();
    expect(loaded).toEqual([{ id: expect.any(String), alias: 'events', rows: 3 }]);
    const [memory] = await loadResources(events);
    const fields = (await engine.resource('events'))?.fields;
    expect(fields).toEqual(memory?.fields);
    expect(fields?.map((f) => f.type)).toEqual(['int', 'int4', 'int8', 'numeric', 'bool', 'date', 'timestamp', '_text', 'json', 'text', 'text']);
    // The memory engine keeps a JSON value as it is; a text column in PostgreSQL holds its text (`5` → "5").
    const texts = new Set(fields?.filter((f) => f.type === 'text').map((f) => f.id));
    const expected = memory?.rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, texts.has(k) && v !== null ? String(v) : v])));
    expect((await engine.search({ resource_id: 'events' })).records).toEqual(expected);
    expect(progress.some((p) => p.reading !== undefined)).toBe(true);
    expect(progress.at(-1)).toEqual({ resource: 'events', rows: 3, totalRows: 3 });
  });

  it('streams a JSON array file as the NDJSON file with the same records', async () => {
    const engine = engines.get(name);
    const loaded = await loadFiles(engine.db, [events, eventsArray], { replace: true, indexes: false });
    await engine.refresh();
    expect(loaded.map((r) => r.rows)).toEqual([3, 3]);
    expect((await engine.resource('events-array'))?.fields).toEqual((await engine.resource('events'))?.fields);
    expect((await engine.search({ resource_id: 'events-array' })).records).toEqual((await engine.search({ resource_id: 'events' })).records);
  });

  it('keeps an integer beyond 2^53 of an NDJSON or JSON file digit for digit, as of a CSV file and as the memory loader does', async () => {
    const engine = engines.get(name);
    const files = { 'exact.csv': 'n\n9007199254740993\n-12345678901234567890\n', 'exact-n.ndjson': '{"n": 9007199254740993}\n{"n": -12345678901234567890}\n', 'exact-a.json': '[{"n": 9007199254740993}, {"n": -12345678901234567890}]' };
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    await loadFiles(engine.db, Object.keys(files).map((file) => join(dir, file)), { replace: true, indexes: false });
    await engine.refresh();
    for (const resource of ['exact', 'exact-n', 'exact-a']) {
      const [memory] = await loadResources(join(dir, Object.keys(files).find((file) => file.startsWith(`${resource}.`))!));
      expect((await engine.resource(resource))?.fields).toEqual([{ id: '_id', type: 'int' }, { id: 'n', type: 'numeric' }]);
      expect(memory?.fields).toEqual((await engine.resource(resource))?.fields);
      expect((await engine.search({ resource_id: resource })).records).toEqual([{ _id: 1, n: '9007199254740993' }, { _id: 2, n: '-12345678901234567890' }]);
    }
  });

  it('a line that is not a JSON object is DATA_INVALID with its line number, and no table is made', async () => {
    const engine = engines.get(name);
    const error = await loadFiles(engine.db, [badLine], { indexes: false }).then(() => undefined, (e: unknown) => e);
    expect((error as ToolError).code).toBe('DATA_INVALID');
    expect((error as ToolError).message).toContain('line 3 is not a JSON object');
    await engine.refresh();
    expect(await engine.resource('bad')).toBeUndefined();
  });

  it('an interrupted load keeps nothing of the new table, and the one it replaced stays', async () => {
    const engine = engines.get(name);
    await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias: 'kept' });
    const controller = new AbortController();
    const error = await loadFiles(engine.db, [wide], {
      replace: true,
      indexes: false,
      alias: 'kept',
      batchRows: 500,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(controller.signal.aborted).toBe(true);
    await engine.refresh();
    expect((await engine.search({ resource_id: 'kept' })).total).toBe(4);
    const fresh = await loadFiles(engine.db, [wide], { indexes: false, alias: 'fresh', signal: AbortSignal.abort() }).then(() => undefined, (e: unknown) => e);
    expect(fresh).toBeInstanceOf(Error);
    await engine.refresh();
    expect(await engine.resource('fresh')).toBeUndefined();
  });

  it('an --alias CKAN\'s datastore_create refuses is refused before anything is loaded; the names CKAN takes are taken', async () => {
    const engine = engines.get(name);
    // ckanext/datastore/helpers.py is_valid_table_name: not empty, no leading "_", no white space around, no `"`, no `%`
    for (const alias of ['', '_hidden', 'say "hi"', '50%', ' padded', 'padded ']) {
      const error = await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias }).then(() => undefined, (e: unknown) => e);
      expect(error, JSON.stringify(alias)).toBeInstanceOf(ToolError);
      expect({ code: (error as ToolError).code, message: (error as ToolError).message }).toEqual({
        code: 'USAGE', message: `--alias ${JSON.stringify(alias)} is not a valid alias name`,
      });
    }
    await engine.refresh();
    expect(await engine.resource('_hidden')).toBeUndefined();
    // CKAN's own test of the rule takes these
    for (const alias of ['foo bar', '42', "'"]) {
      await loadFiles(engine.db, [prices], { replace: true, indexes: false, alias });
      await engine.refresh();
      expect((await engine.search({ resource_id: alias })).total).toBe(4);
    }
  });

  it('a malformed CSV is DATA_INVALID with its line, and no table is made', async () => {
    const engine = engines.get(name);
    const error = await loadFiles(engine.db, [broken], { indexes: false }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('DATA_INVALID');
    expect((error as ToolError).message).toContain('broken.csv');
    await engine.refresh();
    expect(await engine.resource('broken')).toBeUndefined();
  });
});

it('marks the resources named private, and refuses a name no file has before loading anything', async () => {
  const engine = engines.get('pglite');
  await loadFiles(engine.db, [prices, european], { replace: true, indexes: false, private: ['prices'] });
  await engine.refresh();
  expect((await engine.resource('prices'))?.private).toBe(true);
  expect((await engine.resource('european'))?.private).toBe(false);
  const error = await loadFiles(engine.db, [broken], { indexes: false, private: ['nope'] }).then(() => undefined, (e: unknown) => e);
  expect((error as ToolError).code).toBe('USAGE');
  expect((error as ToolError).message).toContain('"nope"');
});

it('openEngine loads files into PGlite through the same stream (ckql serve --engine pglite DIR)', async () => {
  const engine = await openEngine({ engine: 'pglite', data: [prices] });
  try {
    expect((await engine.search({ resource_id: 'prices', limit: 1 })).records).toEqual([{ _id: 6, item: 'none', price: null }]);
  } finally {
    await engine.close();
  }
});

const typesRead = (p: LoadProgress): boolean => p.reading !== undefined;
const rowsCopied = (p: LoadProgress): boolean => p.reading === undefined;
it.each([
  ['a CSV file', 'while its types are read', () => wide, typesRead],
  ['a CSV file', 'while its rows are copied', () => wide, rowsCopied],
  ['an NDJSON file', 'while its types are read', () => events, typesRead],
  ['an NDJSON file', 'while its rows are copied', () => events, rowsCopied],
])('%s interrupted %s is ABORTED', async (_, __, file, when) => {
  const engine = engines.get('pglite');
  const controller = new AbortController();
  const onProgress = (p: LoadProgress): void => {
    if (when(p)) controller.abort();
  };
  const loading = loadFiles(engine.db, [file()], { replace: true, indexes: false, alias: 'stopped', batchRows: 500, signal: controller.signal, onProgress });
  const error = await loading.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(DatastoreError);
  expect((error as DatastoreError).code).toBe('ABORTED');
  await engine.refresh();
  expect(await engine.resource('stopped')).toBeUndefined();
});
