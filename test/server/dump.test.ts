/**
 * `GET /datastore/dump/<id>` against the expectations of CKAN 2.11.5's
 * ckanext/datastore/tests/test_dump.py (the same records, the same bytes),
 * on the memory engine and on PGlite (and PostgreSQL when the tests have a
 * server), and what CKAN 2.12 changes: keyset pages and safe XML names.
 *
 * Where test_dump.py's bytes depend on how CKAN stored a value, they do
 * not apply: CKAN writes a `json` column as Python's `json.dumps` stored it
 * (`["b", {"moo": "moo"}]`), ckql as compact JSON (`["b",{"moo":"moo"}]`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../src/datastore/types.js';
import type { Engine } from '../../src/engine/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { engineNames, openTestEngines, typedTable } from '../engine/sql/engines.js';
import type { TestEngines } from '../engine/sql/engines.js';

const books = typedTable('books', [['book', 'text']], [{ book: 'annakarenina' }, { book: 'warandpeace' }], { id: 'b0000000-0000-4000-8000-000000000001' });
const all = typedTable(
  'all-types',
  [['bük', 'text'], ['author', 'text'], ['published', 'timestamp'], ['characters', '_text'], ['random_letters', '_text'], ['nested', 'json']],
  [
    { 'bük': 'annakarenina', author: 'tolstoy', published: '2005-03-01T00:00:00', characters: ['Princess Anna', 'Sergius'], random_letters: ['a', 'e', 'x'], nested: ['b', { moo: 'moo' }] },
    { 'bük': 'warandpeace', author: 'tolstoy', published: null, characters: null, random_letters: [], nested: { a: 'b' } },
  ],
  { id: 'a0000000-0000-4000-8000-000000000002' },
);
const twelve = typedTable('twelve', [['record', 'text']], Array.from({ length: 12 }, (_, i) => ({ record: String(i) })), { id: 'c0000000-0000-4000-8000-000000000003' });
const tables: readonly Table[] = [books, all, twelve];

let sql: TestEngines;
const servers: RunningServer[] = [];

beforeAll(async () => {
  sql = await openTestEngines(tables);
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await sql.close();
});

async function serve(engine: Engine, options: { maxLimit?: number; ckan?: '2.11' | '2.12' } = {}): Promise<RunningServer> {
  const server = await startServer({ engine, port: 0, ...options });
  servers.push(server);
  return server;
}

async function get(server: RunningServer, path: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** test_dump.py's `get_csv_record_values`: the second column of each line after the header, as numbers. */
function csvRecordValues(text: string): number[] {
  return text.split(/\s+/).filter((line) => line !== '').slice(1).map((line) => Number(line.split(',')[1]));
}

const engines: [string, () => Engine][] = [['memory', () => memoryEngine(tables)], ...engineNames.map((name): [string, () => Engine] => [name, () => sql.get(name)])];

describe.each(engines)('the dump on %s', (_, engineOf) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve(engineOf());
  });

  it('test_dump_basic and test_alias: the header with \\r\\n, the records with \\n', async () => {
    const expected = '_id,book\r\n1,annakarenina\n2,warandpeace\n';
    expect((await get(server, `/datastore/dump/${books.id}`)).text).toBe(expected);
    expect((await get(server, '/datastore/dump/books')).text).toBe(expected);
  });

  it('test_dump_does_not_exist_raises_404 and test_dump_limit', async () => {
    expect((await get(server, '/datastore/dump/does-not-exist')).status).toBe(404);
    expect((await get(server, `/datastore/dump/${books.id}?limit=1`)).text).toBe('_id,book\r\n1,annakarenina\n');
  });

  it('test_all_fields_types and test_dump_q_and_fields', async () => {
    const content = (await get(server, `/datastore/dump/${all.id}`)).text;
    expect(content.startsWith('_id,bük,author,published,characters,random_letters,nested')).toBe(true);
    expect(content).toContain('warandpeace');
    expect(content).toContain('"[""Princess Anna"",""Sergius""]"');
    // CKAN: 'nested,author\r\n"{""a"": ""b""}",tolstoy\n' (its stored json text has Python's spaces)
    expect((await get(server, `/datastore/dump/${all.id}?q=warandpeace&fields=nested,author`)).text).toBe('nested,author\r\n"{""a"":""b""}",tolstoy\n');
  });

  it('test_dump_*_file_extension: Content-Disposition names the id and the format', async () => {
    for (const format of ['csv', 'tsv', 'json', 'xml']) {
      const { headers } = await get(server, `/datastore/dump/${all.id}?limit=1&format=${format}`);
      expect(headers.get('content-disposition')).toBe(`attachment; filename="${all.id}.${format}"`);
    }
    expect((await get(server, `/datastore/dump/${all.id}?format=tsv`)).headers.get('content-type')).toBe('text/tab-separated-values; charset=utf-8');
  });

  it('test_dump_tsv', async () => {
    const expected =
      '_id\tbük\tauthor\tpublished\tcharacters\trandom_letters\tnested\r\n1\tannakarenina\ttolstoy\t2005-03-01T00:00:00\t' +
      '"[""Princess Anna"",""Sergius""]"\t"[""a"",""e"",""x""]"\t' +
      '"[""b"",{""moo"":""moo""}]"\n'; // CKAN: "[""b"", {""moo"": ""moo""}]"
    expect((await get(server, `/datastore/dump/${all.id}?limit=1&format=tsv`)).text).toBe(expected);
  });

  it('test_dump_json: {fields, records} with the records as lists', async () => {
    const content = JSON.parse((await get(server, `/datastore/dump/${all.id}?limit=1&format=json`)).text) as unknown;
    expect(content).toEqual({
      fields: [
        { id: '_id', type: 'int' },
        { id: 'bük', type: 'text' },
        { id: 'author', type: 'text' },
        { id: 'published', type: 'timestamp' },
        { id: 'characters', type: '_text' },
        { id: 'random_letters', type: '_text' },
        { id: 'nested', type: 'json' },
      ],
      records: [[1, 'annakarenina', 'tolstoy', '2005-03-01T00:00:00', ['Princess Anna', 'Sergius'], ['a', 'e', 'x'], ['b', { moo: 'moo' }]]],
    });
  });

  it('test_dump_xml', async () => {
    const expected =
      '<data xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
      '<row _id="1"><bük>annakarenina</bük><author>tolstoy</author><published>2005-03-01T00:00:00</published>' +
      '<characters><value key="0">Princess Anna</value><value key="1">Sergius</value></characters>' +
      '<random_letters><value key="0">a</value><value key="1">e</value><value key="2">x</value></random_letters>' +
      '<nested><value key="0">b</value><value key="1"><value key="moo">moo</value></value></nested></row>\n' +
      '</data>\n';
    expect((await get(server, `/datastore/dump/${all.id}?limit=1&format=xml`)).text).toBe(expected);
  });

  it('a search dumps the table\'s columns, no rank column', async () => {
    expect((await get(server, `/datastore/dump/${books.id}?q=warandpeace`)).text).toBe('_id,book\r\n2,warandpeace\n');
  });

  it('bom: the csv starts with a UTF-8 BOM (for Excel)', async () => {
    const response = await fetch(`${server.url}/datastore/dump/${books.id}?bom=true`);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('_id,book\r\n1,annakarenina\n2,warandpeace\n');
  });

  it('a bad parameter is 400, as dump_schema refuses it', async () => {
    const bad = await get(server, `/datastore/dump/${books.id}?format=xls`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("format: Value must be one of ('csv', 'tsv', 'json', 'xml')");
    expect((await get(server, `/datastore/dump/${books.id}?limit=x`)).status).toBe(400);
  });
});

describe('paging inside the dump', () => {
  it('test_dump_with_low_rows_max and test_dump_pagination_*: every record, limits honoured, in csv and json', async () => {
    for (const maxLimit of [3, 5, 7]) {
      const server = await serve(memoryEngine(tables), { maxLimit });
      expect(csvRecordValues((await get(server, `/datastore/dump/${twelve.id}`)).text)).toEqual([...Array(12).keys()]);
      expect(csvRecordValues((await get(server, `/datastore/dump/${twelve.id}?limit=11`)).text)).toEqual([...Array(11).keys()]);
      expect(csvRecordValues((await get(server, `/datastore/dump/${twelve.id}?limit=6`)).text)).toEqual([...Array(6).keys()]);
      const json = JSON.parse((await get(server, `/datastore/dump/${twelve.id}?limit=7&format=json`)).text) as { records: unknown[][] };
      expect(json.records.map((record) => Number(record[1]))).toEqual([...Array(7).keys()]);
    }
  });

  it('2.12 pages by _id keyset and names XML elements safely', async () => {
    const odd = typedTable('odd', [['2 sides', 'text'], ['xmlish', 'text'], ['sides', 'text']], [{ '2 sides': 'a', xmlish: 'b', sides: 'c' }]);
    const server = await serve(memoryEngine([...tables, odd]), { maxLimit: 5, ckan: '2.12' });
    expect(csvRecordValues((await get(server, `/datastore/dump/${twelve.id}`)).text)).toEqual([...Array(12).keys()]);
    // writer.py's rules: no leading digits or "xml", spaces as _, names kept unique.
    expect((await get(server, '/datastore/dump/odd?format=xml')).text).toContain('<row _id="1"><_sides>a</_sides><ish>b</ish><sides>c</sides></row>');
    const older = await serve(memoryEngine([...tables, odd]));
    expect((await get(older, '/datastore/dump/odd?format=xml')).text).toContain('<row _id="1"><2 sides>a</2 sides>');
  });
});
