/**
 * Integers beyond 2^53 (CKAN's int8 and numeric are exact on the wire) come
 * through the client digit for digit, from the project's own server over
 * local data, and every output format prints them as they were written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import { readResponse } from '../../src/client/response.js';
import { borrowPglite } from '../helpers/pglite-pool.js';
import type { DatastoreClient } from '../../src/client/connect.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { formatRecords } from '../../src/output/format-records.js';
import type { SearchResult } from '../../src/datastore/types.js';
import { ckql } from '../cli/run-ckql.js';

let dir: string;
let server: RunningServer;
let client: DatastoreClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ckql-exact-'));
  writeFileSync(join(dir, 'ids.csv'), 'name,big,score\nfirst,9007199254740993,1.5\nsecond,-9223372036854775807,2\nthird,42,\n');
  writeFileSync(join(dir, 'small.csv'), 'name,n\na,1\nb,9007199254740991\n');
  writeFileSync(join(dir, 'ranks.csv'), 'n,label\n9007199254740993,a\n42,b\n9007199254740992,c\n-9223372036854775807,d\n,e\n5,f\n');
  server = await startServer({ tables: await loadResources(dir), port: 0 });
  client = connect({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the client keeps integers beyond 2^53 exact', () => {
  it('as their text, and every other number as JSON.parse reads it', async () => {
    const result = await client.search('from ids');
    expect(result.fields.find((f) => f.id === 'big')?.type).toBe('int8');
    expect(result.records.map((r) => r.big)).toEqual(['9007199254740993', '-9223372036854775807', 42]);
    expect(result.records.map((r) => r.score)).toEqual([1.5, 2, null]);
    expect(result.records.map((r) => r._id)).toEqual([1, 2, 3]);
  });

  it('a page of safe integers stays numbers (the fast path)', async () => {
    const result = await client.search('from small');
    expect(result.records.map((r) => r.n)).toEqual([1, 9007199254740991]);
  });

  it('and sorts them as the numbers they are, exactly', async () => {
    const desc = await client.search('from ranks order by n desc');
    expect(desc.records.map((r) => r.n)).toEqual([null, '9007199254740993', '9007199254740992', 42, 5, '-9223372036854775807']);
    const asc = await client.search('from ranks order by n');
    expect(asc.records.map((r) => r.n)).toEqual(['-9223372036854775807', 5, 42, '9007199254740992', '9007199254740993', null]);
  });

  it('through searchAll too', async () => {
    const all = [];
    for await (const row of client.searchAll('from ids', { pageSize: 1 })) all.push(row.big);
    expect(all).toEqual(['9007199254740993', '-9223372036854775807', 42]);
  });
});

describe('output formats print the exact digits', () => {
  let result: SearchResult;
  beforeAll(async () => {
    result = await client.search('from ids');
  });

  it('json and ndjson: bare JSON numbers', async () => {
    const ndjson = await formatRecords(result, 'ndjson');
    expect(ndjson.split('\n')[0]).toBe('{"_id":1,"name":"first","big":9007199254740993,"score":1.5}');
    expect(ndjson.split('\n')[1]).toBe('{"_id":2,"name":"second","big":-9223372036854775807,"score":2}');
    const json = await formatRecords(result, 'json');
    expect(json).toContain('"big":9007199254740993');
    const pretty = await formatRecords(result, 'json', { pretty: true });
    expect(pretty).toContain('    "big": -9223372036854775807,');
    expect(JSON.parse(pretty)).toHaveLength(3);
  });

  it('csv: the digits, a negative one not escaped as a formula', async () => {
    const csv = await formatRecords(result, 'csv');
    expect(csv).toBe('_id,name,big,score\n1,first,9007199254740993,1.5\n2,second,-9223372036854775807,2\n3,third,42,\n');
  });

  it('table and markdown: the digits', async () => {
    const table = await formatRecords(result, 'table', { color: false });
    expect(table).toContain('9007199254740993');
    expect(table).toContain('-9223372036854775807');
    const markdown = await formatRecords(result, 'markdown');
    expect(markdown).toContain('| 1 | first | 9007199254740993 | 1.5 |');
  });

  it('ckql query --data, end to end', async () => {
    const run = await ckql(['query', '--data', join(dir, 'ids.csv'), '--format', 'ndjson', 'from ids where name = first']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('{"_id":1,"name":"first","big":9007199254740993,"score":1.5}\n');
  });
});

describe("the client keeps a numeric's scale as CKAN writes it", () => {
  // CKAN's records are PostgreSQL's array_to_json text, handed on unparsed: a numeric keeps its scale (2.0) and
  // every digit (avg's 4.7059195948084837), which JSON.parse would turn into 2 and 4.705919594808484.
  const context = { origin: 'https://data.example.org', sentToken: false };
  const fields = '[{"id":"_id","type":"int"},{"id":"mean","type":"numeric"},{"id":"w","type":"float8"},{"id":"t","type":"text"},{"id":"j","type":"json"}]';

  it('objects: a numeric as its text where a number would write another, every other number a number', async () => {
    // the records as CKAN's search_data has PostgreSQL write them
    const { pg, release } = await borrowPglite();
    let records: string;
    try {
      const sql = `SELECT array_to_json(array_agg(r))::text AS v FROM (VALUES (1, 2.0::numeric, 2.0::float8, '2.0', '{"x":2.50}'::json), (2, 4.7059195948084837, 1e-7, 'a', '[10.0]'), (3, 2.5, NULL, NULL, NULL)) AS r("_id", mean, w, t, j)`;
      records = (await pg.query<{ v: string }>(sql)).rows[0]!.v;
    } finally {
      await release();
    }
    expect(records).toContain('"mean":2.0,');
    const body = `{"help":"h","success":true,"result":{"filters":{"p":2.50},"resource_id":"r","records":${records},"fields":${fields},"total":3}}`;
    const result = readResponse(200, body, context);
    expect(result.records.map((r) => r['mean'])).toEqual(['2.0', '4.7059195948084837', 2.5]);
    expect(result.records.map((r) => r['w'])).toEqual([2, 1e-7, null]);
    expect(result.records.map((r) => r['t'])).toEqual(['2.0', 'a', null]);
    expect(result.records.map((r) => r['j'])).toEqual([{ x: 2.5 }, [10], null]);
    expect((result as unknown as { filters: unknown }).filters).toEqual({ p: 2.5 });
  });

  it('lists: by the fields’ order', () => {
    const body = `{"success":true,"result":{"resource_id":"r","records":[[1,10.50,0.5,"x",null]],"fields":${fields},"records_format":"lists"}}`;
    expect(readResponse(200, body, context).records).toEqual([[1, '10.50', 0.5, 'x', null]]);
  });

  it('prints as PostgreSQL does in every format', async () => {
    const body = `{"success":true,"result":{"resource_id":"r","records":[{"_id":1,"mean":-2.0,"w":2.0,"t":"x","j":null}],"fields":${fields}}}`;
    const result = readResponse(200, body, context);
    expect(await formatRecords(result, 'csv')).toBe('_id,mean,w,t,j\n1,-2.0,2,x,\n');
    expect(await formatRecords(result, 'ndjson')).toBe('{"_id":1,"mean":-2.0,"w":2,"t":"x","j":null}\n');
  });
});
