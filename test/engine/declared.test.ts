/**
 * Declared types everywhere data is read: each source of types (a fields
 * file beside the data, `--fields` with a Table Schema, a datapackage.json,
 * `--infer xloader|datapusher|ckql`) loaded into the memory, PGlite and
 * PostgreSQL engines gives the same fields, data dictionary and records;
 * the PostgreSQL engines keep `info` as CKAN 2.11's column comments, and
 * read such a comment written by hand in a database ckql did not make.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/open.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { loadFiles } from '../../src/engine/sql/load-files.js';
import type { SqlEngine } from '../../src/engine/sql/engine.js';
import type { OpenEngineOptions } from '../../src/engine/open.js';
import type { Engine } from '../../src/engine/types.js';
import { describedInfo } from '../../src/server/catalog.js';
import { cellValue } from '../../src/engine/declared.js';
import { engineNames, serverUrl } from './sql/engines.js';
import { SPENDING_ID, writePortalData } from '../helpers/portal-data.js';
import type { PortalData } from '../helpers/portal-data.js';

let data: PortalData;
const databases: string[] = [];

beforeAll(() => {
  data = writePortalData();
  // What xloader and DataPusher would make of a messy spreadsheet (xloader also cuts a long header to 63 characters).
  const messy = join(data.root, 'messy');
  const long = join(data.root, 'long');
  mkdirSync(messy);
  mkdirSync(long);
  writeFileSync(join(messy, 'readings.csv'), '  Station Name  ,code,when,value,flag\n  north ,1,2023-01-01,1.5,true\nsouth,2,2023-01-02T10:00:00,17,false\n');
  writeFileSync(join(long, 'long-readings.csv'), `  Station Name  ,${'x'.repeat(70)},when,value,flag\n  north ,1,2023-01-01,1.5,true\nsouth,2,2023-01-02T10:00:00,17,false\n`);
  writeFileSync(
    join(data.root, 'schema.json'),
    JSON.stringify({ fields: [{ name: 'year', type: 'integer', title: 'Year' }, { name: 'source', type: 'string' }, { name: 'amount', type: 'number' }], primaryKey: ['year', 'source'] }),
  );
});

afterAll(async () => {
  rmSync(data.root, { recursive: true, force: true });
  if (serverUrl === undefined) return;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/** A fresh database on the test server. */
async function freshDatabase(): Promise<string> {
  const name = `ckql_declared_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  databases.push(name);
  const url = new URL(serverUrl as string);
  url.pathname = `/${name}`;
  return url.toString();
}

async function openOn(kind: 'memory' | 'pglite' | 'postgres', options: OpenEngineOptions): Promise<Engine> {
  if (kind === 'postgres') return openEngine({ ...options, engine: 'postgres', db: await freshDatabase() });
  return openEngine({ ...options, engine: kind });
}

/** What an engine answers for every resource: fields with info, records in `_id` order, and datastore_info without sizes. */
async function answers(engine: Engine): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const resource of await engine.resources()) {
    const result = await engine.search({ resource_id: resource.id, limit: 1000, sort: '_id' });
    const info = (await engine.info?.(resource.id)) ?? describedInfo(resource);
    out[resource.aliases[0] ?? resource.id] = {
      id: resource.id,
      aliases: resource.aliases,
      fields: result.fields,
      records: result.records,
      count: info.meta.count,
      schema: info.fields.map((f) => [f.id, f.schema.native_type, f.schema.is_index]),
    };
  }
  return out;
}

const kinds = ['memory', ...engineNames] as const;

/**
 * Each source of types, as the loaders take it: a fields file beside the data (CKAN datastore_create
 * fields, an id, aliases, _id values) and a datapackage.json (Table Schemas, titles as labels), `--fields`
 * with a Table Schema (integer by its values, a primary key), `--infer xloader` (all text, headers
 * trimmed and cut to 63 characters, cells trimmed) and `--infer datapusher` (numeric, timestamp, text).
 */
const sources = (): { data: string[]; fields?: string; infer?: 'xloader' | 'datapusher' }[] => [
  { data: [join(data.cityBudget, 'spending.csv'), data.airQuality] },
  { data: [join(data.cityBudget, 'revenue.csv')], fields: join(data.root, 'schema.json') },
  { data: [join(data.root, 'long')], infer: 'xloader' },
  { data: [join(data.root, 'messy')], infer: 'datapusher' },
];

/** Every source loaded into one engine of a kind: the memory loader's tables, or `loadFiles` into one database. */
async function loadedOn(kind: 'memory' | 'pglite' | 'postgres'): Promise<Engine> {
  if (kind === 'memory') {
    const tables = [];
    for (const source of sources()) tables.push(...(await loadResources(source.data, source)));
    return memoryEngine(tables);
  }
  const engine = (await openOn(kind, {})) as SqlEngine;
  try {
    for (const source of sources()) await loadFiles(engine.db, source.data, { ...source, indexes: false });
    await engine.refresh();
    return engine;
  } catch (error) {
    await engine.close();
    throw error;
  }
}

describe('each source of declared types', () => {
  it(`answers alike on ${kinds.join(', ')}: fields, data dictionary, records, count, schema`, async () => {
    const seen: unknown[] = [];
    for (const kind of kinds) {
      const engine = await loadedOn(kind);
      try {
        seen.push(await answers(engine));
      } finally {
        await engine.close();
      }
    }
    expect(Object.keys(seen[0] as object).sort()).toEqual(['long-readings', 'measurements-2023', 'readings', 'revenue', 'spending', 'stations']);
    for (const other of seen.slice(1)) expect(other).toEqual(seen[0]);
  }, 120_000);
});

describe('what each source of types makes (memory engine)', () => {
  it('a fields file: its types, dictionary, id, aliases and _id values; "" an empty text, nothing a null', async () => {
    const engine = await openEngine({ data: [join(data.cityBudget, 'spending.csv')] });
    const result = await engine.search({ resource_id: 'budget-spending' });
    expect(result.resource_id).toBe(SPENDING_ID);
    expect(result.fields.map((f) => [f.id, f.type, f.info?.label ?? null])).toEqual([
      ['_id', 'int', null], ['year', 'text', 'Year'], ['department', 'text', 'Department'], ['amount', 'text', 'Amount'], ['note', 'text', null],
    ]);
    expect(result.records.map((r) => [r._id, r.year, r.note])).toEqual([[3, '2019', ''], [7, '2020', null], [11, '2021', 'a, b']]);
    expect((await engine.resource(SPENDING_ID))?.aliases).toEqual(['spending', 'budget-spending']);
    await engine.close();
  });

  it('xloader and DataPusher type as those loaders do; a type_override is honoured by them', async () => {
    const xloader = await openEngine({ data: [join(data.root, 'long')], infer: 'xloader' });
    const fields = (await xloader.search({ resource_id: 'long-readings', limit: 1 })).fields;
    expect(fields.map((f) => [f.id, f.type])).toEqual([['_id', 'int'], ['Station Name', 'text'], ['x'.repeat(63), 'text'], ['when', 'text'], ['value', 'text'], ['flag', 'text']]);
    expect((await xloader.search({ resource_id: 'long-readings', limit: 1 })).records[0]?.['Station Name']).toBe('north');
    await xloader.close();
    const datapusher = await openEngine({ data: [join(data.root, 'messy')], infer: 'datapusher' });
    expect((await datapusher.search({ resource_id: 'readings', limit: 1 })).fields.map((f) => f.type)).toEqual(['int', 'text', 'numeric', 'timestamp', 'numeric', 'text']);
    expect((await datapusher.search({ resource_id: 'readings', limit: 1 })).records[0]?.['  Station Name  ']).toBe('  north ');
    await datapusher.close();
    writeFileSync(join(data.root, 'overridden.csv'), 'value,other\n1.5,2\n');
    writeFileSync(join(data.root, 'overridden.fields.json'), JSON.stringify([{ id: 'value', info: { type_override: 'numeric' } }]));
    const overridden = await openEngine({ data: [join(data.root, 'overridden.csv')], infer: 'xloader' });
    expect((await overridden.search({ resource_id: 'overridden', limit: 1 })).fields.map((f) => f.type)).toEqual(['int', 'numeric', 'text']);
    await overridden.close();
  });

  it('a cell that is not its declared type is refused, naming the record and the column', async () => {
    const bad = join(data.root, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'b.csv'), 'n\n1\nabc\n');
    writeFileSync(join(bad, 'b.fields.json'), JSON.stringify([{ id: 'n', type: 'int' }]));
    // The memory loader and PostgreSQL's (PGlite's) refuse it alike.
    for (const kind of ['memory', 'pglite'] as const) {
      await expect(openOn(kind, { data: [bad] })).rejects.toMatchObject({ code: 'DATA_INVALID', message: expect.stringContaining('record 2, column "n": "abc" is not a whole number (int4), its declared type') });
    }
    writeFileSync(join(bad, 'b.fields.json'), JSON.stringify([{ id: 'n', type: 'money' }]));
    await expect(openEngine({ data: [bad] })).rejects.toThrow(/the field "n" has the type "money", which ckql's engines do not hold/);
  });

  it('reads cells as PostgreSQL does', () => {
    expect([cellValue(' 42 ', 'int4'), cellValue('+7', 'int8'), cellValue('9223372036854775807', 'int8')]).toEqual([42, 7, '9223372036854775807']);
    expect(() => cellValue('2147483648', 'int4')).toThrow(/out of range for int4/);
    expect([cellValue('.5', 'numeric'), cellValue('1e3', 'numeric'), cellValue('on', 'bool'), cellValue('F', 'bool')]).toEqual([0.5, 1000, true, false]);
    expect([cellValue('2020-02-29 10:30', 'timestamp'), cellValue('2020-02-29T10:30:00Z', 'date')]).toEqual(['2020-02-29T10:30:00', '2020-02-29']);
    expect(() => cellValue('2021-02-29', 'date')).toThrow(/not an ISO 8601 date/);
    expect([cellValue('{a,"b c",NULL}', '_text'), cellValue('[1, 2]', '_int4'), cellValue('{"k": [1]}', 'json')]).toEqual([['a', 'b c', null], [1, 2], { k: [1] }]);
  });
});

describe.each(engineNames)('info as CKAN 2.11 keeps it, on %s', (kind) => {
  it('is written as column comments and read back, also from a table ckql did not make', async () => {
    const engine = await openOn(kind, { data: [join(data.cityBudget, 'spending.csv')] });
    try {
      const db = (engine as unknown as { db: { transaction<T>(work: (tx: { query(text: string): Promise<{ rows: Record<string, unknown>[] }> }) => Promise<T>): Promise<T> } }).db;
      const sql = { query: (text: string) => db.transaction((tx) => tx.query(text)) };
      const comment = await sql.query(`SELECT col_description('"${SPENDING_ID}"'::regclass, 2) AS c`);
      // attnum 2 is `_full_text`; the comment of `year` (attnum 3) is CKAN's: a space, then {"_info": …}.
      expect(comment.rows[0]?.['c']).toBeNull();
      const year = await sql.query(`SELECT col_description('"${SPENDING_ID}"'::regclass, 3) AS c`);
      expect(year.rows[0]?.['c']).toBe(' {"_info":{"label":"Year","notes":"The budget year.","type_override":"int"}}');
      // A table as CKAN's datastore_create makes it, with comments of 2.11 (read), 2.10 (not read by 2.11) and not JSON.
      await sql.query(`CREATE TABLE "ckan-made" ("_id" serial primary key, "_full_text" tsvector, "year" text, "old" text, "odd" text)`);
      await sql.query(`COMMENT ON COLUMN "ckan-made"."year" IS ' {"_info":{"label":"Year","type_override":"int"},"tabledesigner":{"x":1}}'`);
      await sql.query(`COMMENT ON COLUMN "ckan-made"."old" IS '{"label":"Old style"}'`);
      await sql.query(`COMMENT ON COLUMN "ckan-made"."odd" IS 'just words'`);
      await sql.query(`INSERT INTO "ckan-made" ("year", "old", "odd") VALUES ('2020', 'a', 'b')`);
      await (engine as unknown as { refresh(): Promise<void> }).refresh();
      const fields = (await engine.search({ resource_id: 'ckan-made', limit: 0 })).fields;
      expect(fields).toEqual([
        { id: '_id', type: 'int' },
        { id: 'year', type: 'text', info: { label: 'Year', type_override: 'int' } },
        { id: 'old', type: 'text' },
        { id: 'odd', type: 'text' },
      ]);
      const info = await engine.info?.('ckan-made');
      expect(info?.fields[0]).toMatchObject({ id: 'year', info: { label: 'Year' }, schema: { native_type: 'text' } });
      expect(info?.meta.count).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
