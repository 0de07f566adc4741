/**
 * `ckql export`: every path gives the same file; the file and its fields
 * file load back as the same table (types, data dictionary, id, aliases,
 * `_id`s) on the memory, PGlite and PostgreSQL engines; an export cut short
 * goes on with `resume`; and a portal that shuffles records with equal sort
 * keys between requests still gives every record exactly once.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/connect.js';
import type { Row } from '../../src/datastore/types.js';
import { QueryError } from '../../src/errors.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { openEngine } from '../../src/engine/open.js';
import type { OpenEngineOptions } from '../../src/engine/open.js';
import type { Engine } from '../../src/engine/types.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { exportRecords } from '../../src/session/export.js';
import type { ExportPath } from '../../src/session/export.js';
import { engineNames, serverUrl } from '../engine/sql/engines.js';
import { writePortalData } from '../helpers/portal-data.js';
import type { PortalData } from '../helpers/portal-data.js';
import { startStubPortal } from '../helpers/stub-portal.js';
import { typedTable } from '../engine/sql/engines.js';

let data: PortalData;
let out: string;
const databases: string[] = [];

beforeAll(() => {
  data = writePortalData();
  out = mkdtempSync(join(tmpdir(), 'ckql-export-'));
});

afterAll(async () => {
  rmSync(data.root, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
  if (serverUrl === undefined || databases.length === 0) return;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

async function openOn(kind: 'memory' | 'pglite' | 'postgres', options: OpenEngineOptions): Promise<Engine> {
  if (kind !== 'postgres') return openEngine({ ...options, engine: kind });
  const name = `ckql_export_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  databases.push(name);
  const url = new URL(serverUrl as string);
  url.pathname = `/${name}`;
  return openEngine({ ...options, engine: 'postgres', db: url.toString() });
}

/** A resource as an engine holds it: id, aliases, fields with their dictionary, every record with its `_id`. */
async function table(engine: Engine, name: string): Promise<{ id: string; aliases: readonly string[]; fields: unknown; records: readonly Row[] }> {
  const resource = await engine.resource(name);
  if (resource === undefined) throw new Error(`no ${name}`);
  const result = await engine.search({ resource_id: resource.id, limit: 1000, sort: '_id' });
  return { id: resource.id, aliases: resource.aliases, fields: result.fields, records: result.records };
}

const kinds = ['memory', ...engineNames] as const;

describe.each(kinds)('export and load on %s', (kind) => {
  let engine: Engine;
  let server: RunningServer;
  let server212: RunningServer;
  let client: DatastoreClient;
  const clients: DatastoreClient[] = [];

  beforeAll(async () => {
    engine = kind === 'memory' ? await openEngine({ data: [data.airQuality, data.cityBudget] }) : await openOn(kind, { data: [data.airQuality, data.cityBudget] });
    server = await startServer({ engine, port: 0 });
    server212 = await startServer({ engine, port: 0, ckan: '2.12' });
    client = connect({ url: server.url, target: 'ckan-2.11' });
    clients.push(client);
  });

  afterAll(async () => {
    for (const each of clients) await each.close();
    await server.close();
    await server212.close();
    await engine.close();
  });

  it('every path writes the same file: dump, next_page, sql, offset', async () => {
    const paths: [ExportPath, DatastoreClient][] = [
      ['dump', client],
      ['offset', client],
      ['next_page', connect({ url: server212.url, target: 'ckan-2.12' })],
      ...(kind === 'memory' ? [] : [['sql', connect({ url: server.url, target: 'sql' })] as [ExportPath, DatastoreClient]]),
    ];
    const files: string[] = [];
    for (const [path, via] of paths) {
      clients.push(via);
      const file = join(out, `${kind}-${path}.csv`);
      const summary = await exportRecords({ client: via, input: 'air-quality/measurements 2023', file, path, pageSize: 2 });
      expect(summary).toMatchObject({ path, records: 4, format: 'csv' });
      files.push(readFileSync(file, 'utf8'));
      expect(existsSync(`${file}.part`)).toBe(false);
    }
    for (const text of files.slice(1)) expect(text).toBe(files[0]);
    expect(files[0]?.split('\n')[0]).toBe('_id,station,day,pm10,valid,count\r');
  });

  // Every format on the memory engine; csv (the dump's, the default) on the PostgreSQL engines (a fresh database per load is the slow part).
  const formats = kind === 'memory' ? (['csv', 'ndjson', 'json', 'tsv'] as const) : (['csv'] as const);
  it.each(formats)('a %s export and its fields file load back as the same table', async (format) => {
    const resources = [['budget-spending', 'spending'], ['air-quality/stations', 'stations'], ['measurements-2023', 'measurements-2023']] as const;
    const files: string[] = [];
    for (const [input, name] of resources) {
      const file = join(out, `${kind}-${format}-${name}-copy.${format}`);
      const summary = await exportRecords({ client, input, file });
      expect(summary.fieldsFile).toBe(join(out, `${kind}-${format}-${name}-copy.fields.json`));
      files.push(file);
    }
    const copy = await openOn(kind, { data: files });
    try {
      for (const [, name] of resources) {
        const original = await table(engine, name);
        const loaded = await table(copy, original.id);
        expect(loaded.id).toBe(original.id);
        expect(loaded.aliases).toEqual(expect.arrayContaining([...original.aliases]));
        expect(loaded.fields).toEqual(original.fields);
        expect(loaded.records).toEqual(original.records);
      }
    } finally {
      await copy.close();
    }
  }, 120_000);

  it('a query exports what it selects, its order kept and its limit honoured', async () => {
    const file = join(out, `${kind}-query.ndjson`);
    const summary = await exportRecords({ client, input: 'from spending where department = parks order by amount desc', file });
    expect(summary.path).toBe('dump');
    // `amount` is stored as text (its dictionary says numeric): "15000" sorts above "1200.50" here, as on the portal.
    expect(readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as Row)._id)).toEqual([11, 3]);
    // What datastore_search cannot say goes by the SQL keyset where the portal enables it, else it is applied here.
    const residual = join(out, `${kind}-residual.csv`);
    const planned = await exportRecords({ client, input: 'from measurements-2023 where pm10 != 40 select station, pm10 limit 2', file: residual, pageSize: 1 });
    expect(planned.path).toBe(kind === 'memory' ? 'offset' : 'sql');
    expect(readFileSync(residual, 'utf8')).toBe('station,pm10\r\nA,12.5\nB,7.25\n');
  });
});

describe('resume', () => {
  let server: RunningServer;
  let client: DatastoreClient;
  const rows = Array.from({ length: 95 }, (_, i) => ({ n: i + 1, text: `line ${i + 1}, "quoted"\nand more` }));

  beforeAll(async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(data.root, 'many.ndjson'), rows.map((row) => JSON.stringify(row)).join('\n'));
    server = await startServer({ tables: await loadResources([join(data.root, 'many.ndjson')]), port: 0 });
    client = connect({ url: server.url });
  });

  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it.each(['csv', 'ndjson', 'json'] as const)('a %s export cut short leaves only FILE.part, and --resume finishes it as a whole export would', async (format) => {
    for (const path of ['offset', 'dump'] as const) {
      const whole = join(out, `whole-${path}.${format}`);
      await exportRecords({ client, input: 'many', file: whole, path, pageSize: 10 });
      const file = join(out, `cut-${path}.${format}`);
      const controller = new AbortController();
      const cut = exportRecords({
        client, input: 'many', file, path, pageSize: 10, signal: controller.signal,
        onProgress: ({ written }) => {
          if (written >= 30) controller.abort();
        },
      });
      // The offset path stops between pages; the dump may already be whole when its first piece lands.
      const stopped = await cut.then(() => false, () => true);
      if (!stopped) continue;
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.part`)).toBe(true);
      // A record cut in the middle is dropped on resume, and asked again.
      truncateSync(`${file}.part`, statSync(`${file}.part`).size - 5);
      const resumed = await exportRecords({ client, input: 'many', file, path, pageSize: 10, resume: true });
      expect(resumed.resumed).toBeGreaterThanOrEqual(28);
      expect(resumed.records).toBe(95);
      expect(readFileSync(file, 'utf8')).toBe(readFileSync(whole, 'utf8'));
      expect(existsSync(`${file}.part`)).toBe(false);
    }
  });

  /** An export of `many` to `file` stopped after its first pages, leaving `file.part`. */
  async function cutShort(file: string, path: ExportPath, on: DatastoreClient = client): Promise<void> {
    const controller = new AbortController();
    const stopped = await exportRecords({
      client: on, input: 'many', file, path, pageSize: 10, signal: controller.signal,
      onProgress: ({ written }) => {
        if (written >= 30) controller.abort();
      },
    }).then(() => false, () => true);
    expect(stopped, `${path} was cut short`).toBe(true);
  }

  it.each(['csv', 'ndjson', 'json'] as const)('a %s .part with a line that is no record, or a record the source does not have at that place, is refused naming the line', async (format) => {
    const { appendFileSync } = await import('node:fs');
    const newer = await startServer({ tables: await loadResources([join(data.root, 'many.ndjson')]), port: 0, ckan: '2.12' });
    const on212 = connect({ url: newer.url });
    try {
      for (const [path, on] of [['offset', client], ['next_page', on212]] as const) {
        const file = join(out, `tampered-${path}.${format}`);
        // a garbage line: the dump path exported everything again after it (62,005 duplicates), the offset path kept it
        await cutShort(file, path, on);
        const lines = readFileSync(`${file}.part`, 'utf8').split('\n').length;
        appendFileSync(`${file}.part`, 'this is no record\n');
        await expect(exportRecords({ client: on, input: 'many', file, path, pageSize: 10, resume: true })).rejects.toMatchObject({
          code: 'RESUME_MISMATCH', message: expect.stringContaining(`line ${lines}`),
        });
        // A record with a high _id appended: 2.12's next_page resumed after it and dropped every record between. Its
        // values made up, or the source's own record 90 copied (right values, wrong place): both are refused.
        const recordText = (text: string): string => {
          const record = { _id: 90, n: 90, text };
          if (format === 'csv') return `90,90,"${text.replaceAll('"', '""')}"\n`;
          return `${JSON.stringify(record)}${format === 'json' ? ',' : ''}\n`;
        };
        for (const [forged, why] of [[recordText('made up'), 'does not match'], [recordText(rows[89]!.text), 'records were added to or taken from the file']] as const) {
          await cutShort(file, path, on);
          appendFileSync(`${file}.part`, forged);
          const refused = await exportRecords({ client: on, input: 'many', file, path, pageSize: 10, resume: true }).then(() => undefined, (error: unknown) => error);
          expect(refused, `${path} ${format}`).toMatchObject({ code: 'RESUME_MISMATCH', message: expect.stringContaining(why), hint: expect.stringContaining('leave out --resume') });
        }
        // the choice of starting again works
        const again = await exportRecords({ client: on, input: 'many', file, path, pageSize: 10 });
        expect(again.records).toBe(95);
      }
    } finally {
      await on212.close();
      await newer.close();
    }
  });

  it('a second export to the same file while one runs is refused (EXPORT_LOCKED), and the first finishes whole', async () => {
    const file = join(out, 'locked.csv');
    const whole = join(out, 'locked-whole.csv');
    await exportRecords({ client, input: 'many', file: whole, path: 'offset', pageSize: 10 });
    let second: Promise<unknown> | undefined;
    const first = exportRecords({
      client, input: 'many', file, path: 'offset', pageSize: 10,
      onProgress: ({ written }) => {
        second ??= exportRecords({ client, input: 'many', file, path: 'offset', pageSize: 10, resume: written > 0 }).then(() => undefined, (error: unknown) => error);
      },
    });
    expect((await first).records).toBe(95);
    expect(await second).toMatchObject({ code: 'EXPORT_LOCKED', message: expect.stringContaining(`(process ${process.pid})`) });
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(whole, 'utf8'));
    expect(existsSync(`${file}.lock`)).toBe(false);
    // a lock left by a process that is gone is taken over
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${file}.lock`, '999999999\n');
    expect((await exportRecords({ client, input: 'many', file, path: 'offset', pageSize: 10 })).records).toBe(95);
  });

  it('a field the resource does not have is refused before any file is written, at its place in the query', async () => {
    const file = join(out, 'misspelt.csv');
    const refused = await exportRecords({ client, input: 'from many where nn >= 3 order by n', file }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(QueryError);
    expect(refused).toMatchObject({ code: 'UNKNOWN_FIELD', span: { start: 16, end: 18 }, hint: 'did you mean "n"?' });
    expect([file, `${file}.part`, `${file}.part.json`].filter((each) => existsSync(each))).toEqual([]);
  });

  it('an output in a folder that does not exist, or that is a folder, is refused before anything is written', async () => {
    const { mkdirSync } = await import('node:fs');
    const missing = join(out, 'no-such-folder', 'many.csv');
    await expect(exportRecords({ client, input: 'many', file: missing })).rejects.toMatchObject({
      code: 'USAGE', message: expect.stringContaining(`the folder ${join(out, 'no-such-folder')} does not exist`),
    });
    // a folder as the output: the records were written to FOLDER.part and the rename failed at the end
    const folder = join(out, 'a-folder');
    mkdirSync(folder);
    await expect(exportRecords({ client, input: 'many', file: folder })).rejects.toMatchObject({
      code: 'USAGE', message: expect.stringContaining(`${folder} is a folder`), hint: expect.stringContaining(join(folder, 'many.csv')),
    });
    expect([`${folder}.part`, `${folder}.part.json`, `${folder}.fields.json`].filter((each) => existsSync(each))).toEqual([]);
    // a folder nobody may write in (sysfs refuses even root): a usage error naming the file, not a crash
    await expect(exportRecords({ client, input: 'many', file: '/sys/many.csv' })).rejects.toMatchObject({
      code: 'USAGE', message: expect.stringMatching(/cannot export to \/sys\/many\.csv: \/sys\/many\.csv\.\w+ cannot be written/),
    });
  });

  it('a path given with --via that cannot give the query\'s records is refused before anything is written', async () => {
    // each was taken as asked: next_page dropped what ckql applies itself (320 records for 25), sql an order and an offset
    const refused = async (input: string, path: ExportPath, on: DatastoreClient = client): Promise<unknown> => {
      const file = join(out, `via-${path}.csv`);
      const error = await exportRecords({ client: on, input, file, path }).then(() => undefined, (e: unknown) => e);
      expect([file, `${file}.part`, `${file}.part.json`].filter((each) => existsSync(each))).toEqual([]);
      return error;
    };
    expect(await refused('many', 'next_page')).toMatchObject({ code: 'USAGE', message: expect.stringContaining("next_page is CKAN 2.12's, and this source answers as ckan-2.11") });
    expect(await refused('from many order by text', 'sql')).toMatchObject({ code: 'USAGE', message: expect.stringContaining('the query orders its records otherwise') });
    expect(await refused('from many offset 90', 'sql')).toMatchObject({ code: 'USAGE', message: expect.stringContaining('skips some (offset)') });
    expect(await refused('many', 'sql')).toMatchObject({ code: 'USAGE', message: expect.stringContaining('this source does not answer datastore_search_sql') });
    const newer = await startServer({ tables: await loadResources([join(data.root, 'many.ndjson')]), port: 0, ckan: '2.12' });
    const on212 = connect({ url: newer.url });
    try {
      expect(await refused('from many where text like "%9%"', 'next_page', on212)).toMatchObject({ code: 'USAGE', message: expect.stringContaining('CKAN 2.12 cannot say all of it') });
      expect(await refused('from many order by n desc', 'next_page', on212)).toMatchObject({ code: 'USAGE', message: expect.stringContaining('the query orders its records otherwise') });
      // what it can say, it gives, as the cheapest path would
      const file = join(out, 'via-fine.csv');
      expect((await exportRecords({ client: on212, input: 'from many where n >= 90', file, path: 'next_page' })).records).toBe(6);
    } finally {
      await on212.close();
      await newer.close();
    }
  });

  it('a new export the portal refuses before its first record leaves no FILE.part to resume', async () => {
    const file = join(out, 'refused.csv');
    // the field is checked against the resource first; a value the portal refuses fails the first page
    const refused = exportRecords({ client, input: 'from many where n > "three"', file, path: 'offset' });
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect([file, `${file}.part`, `${file}.part.json`].filter((each) => existsSync(each))).toEqual([]);
  });

  it('refuses to resume another export into the same file', async () => {
    const file = join(out, 'other.csv');
    const controller = new AbortController();
    await exportRecords({ client, input: 'many', file, path: 'offset', pageSize: 10, signal: controller.signal, onProgress: () => controller.abort() }).catch(() => undefined);
    await expect(exportRecords({ client, input: 'from many where n = 3', file, resume: true })).rejects.toThrow(/was written by another export/);
  });
});

describe('a portal that shuffles records with equal sort keys between requests (test/helpers/stub-portal.ts)', () => {
  const shuffled = typedTable('shuffled', [['grp', 'text'], ['n', 'int4']], Array.from({ length: 60 }, (_, i) => ({ grp: ['a', 'b', 'c'][i % 3] as string, n: i + 1 })), { id: 'shuffled' });

  it('pages that sort by the group alone repeat and drop records (the stub is a real adversary)', async () => {
    const portal = await startStubPortal({ tables: [shuffled], shuffleTies: true });
    const client = connect({ url: portal.url });
    try {
      const seen: number[] = [];
      for (let offset = 0; offset < 60; offset += 7) {
        const page = await client.search({ resource_id: 'shuffled', sort: 'grp', limit: 7, offset });
        seen.push(...page.records.map((record) => record._id as number));
      }
      expect(seen).toHaveLength(60);
      expect(new Set(seen).size).toBeLessThan(60);
    } finally {
      await client.close();
      await portal.close();
    }
  });

  it('export gives every record exactly once, in the order asked (the sort ends in _id)', async () => {
    const portal = await startStubPortal({ tables: [shuffled], shuffleTies: true });
    const client = connect({ url: portal.url });
    try {
      const file = join(out, 'shuffled.ndjson');
      const summary = await exportRecords({ client, input: 'from shuffled order by grp desc', file, pageSize: 7, fieldsFile: false });
      // The stub has no dump: the export takes the next path.
      expect(summary.path).toBe('offset');
      const ids = readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as Row)._id as number);
      expect(ids).toHaveLength(60);
      expect(new Set(ids).size).toBe(60);
      expect(ids.slice(0, 3)).toEqual([3, 6, 9]);
      const pages = portal.requests.filter((r) => r.limit === 7);
      expect(pages.map((r) => r.sort)).toEqual(Array(9).fill('grp desc, _id asc'));
    } finally {
      await client.close();
      await portal.close();
    }
  });
});
