/**
 * The `sql` target end to end: the client sends one datastore_search_sql
 * SELECT to `ckql serve` over the PGlite engine (CKAN's table layout), and
 * gets the records, order and total that the ckan-2.11 plan and the
 * reference walker give.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import { compile } from '../../src/compile/compile.js';
import { readSqlText } from '../../src/datastore/sql-text.js';
import type { DatastoreClient } from '../../src/client/types.js';
import type { Row, Table } from '../../src/datastore/types.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { loadResources } from '../../src/engine/node/load-resources.js';
import { openEngine } from '../../src/engine/open.js';
import type { Engine } from '../../src/engine/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { ToolError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { repoRoot } from '../cli/run-ckql.js';

const demoEnrolments = join(repoRoot, 'examples', 'data', 'enrolments.csv');
/** A resource whose names and values hold colons, which SQLAlchemy's text() reads as bind parameters. */
const COLONS_CSV = ['title,x :y', '"a :b",1', '10:30,2', '"x::y",3', ':start,4', '"a \\:b",5', 'plain,6'].join('\n');
/** The folder this file serves: a sample of the demo's enrolments (below), and the colons. */
let colonsDir: string;
let engine: Engine;
let server: RunningServer;
let sql: DatastoreClient;
let planned: DatastoreClient;
let enrolments: Table;

const log: string[] = [];
let capped: RunningServer;

beforeAll(async () => {
  colonsDir = await mkdtemp(join(tmpdir(), 'ckql-colons-'));
  await writeFile(join(colonsDir, 'colons.csv'), COLONS_CSV);
  // The first 6,000 enrolments and every MATH-106 one (the paging tests below need its many pages):
  // all 20,000 cost seconds of CPU to load into PGlite and to page through as the 2.11 plan, and showed
  // nothing more.
  const [header = '', ...records] = (await readFile(demoEnrolments, 'utf8')).trimEnd().split('\n');
  const sample = records.filter((line, i) => i < 6_000 || line.split(',')[1] === 'MATH-106');
  const data = join(colonsDir, 'enrolments.csv');
  await writeFile(data, `${[header, ...sample].join('\n')}\n`);
  engine = await openEngine({ engine: 'pglite', data: [data, join(colonsDir, 'colons.csv')] });
  server = await startServer({ engine, port: 0, log: (line) => log.push(line) });
  // A portal whose rows_max is 5: datastore_search_sql cuts longer answers and says records_truncated.
  capped = await startServer({ engine, port: 0, maxLimit: 5 });
  sql = connect({ url: server.url, retries: 0, target: 'sql' });
  planned = connect({ url: server.url, retries: 0, target: 'ckan-2.11' });
  enrolments = (await loadResources([data], { only: ['enrolments'] })).find((t) => t.aliases.includes('enrolments'))!;
}, 60_000);

afterAll(async () => {
  await sql?.close();
  await planned?.close();
  await server?.close();
  await capped?.close();
  await engine?.close();
  if (colonsDir !== undefined) await rm(colonsDir, { recursive: true, force: true });
});

it.each([
  'from enrolments where grade >= 5.5 and status != withdrawn order by student select student, grade, status limit 7',
  'from enrolments where (course = MATH-106 or term = "2024-autumn") and grade between 4 and 5 order by grade desc, student select student, course, term, grade limit 6 offset 3',
  'from enrolments where status not in (completed, withdrawn) and enrolled_on is not null order by enrolled_on desc nulls last select student, status, enrolled_on limit 4',
])('%s: the same records and total as the 2.11 plan and the reference walker', async (query) => {
  const bySql = await sql.search(query);
  const byPlan = await planned.search(query, { total: true });
  const reference = evaluateQuery(query, enrolments);
  expect(bySql.records).toEqual(byPlan.records);
  expect(bySql.total).toBe(byPlan.total);
  expect(bySql.total).toBe(reference.total);
  expect(bySql.records.map((r) => r['student'])).toEqual(reference.records.map((r) => r['student']));
  expect(bySql.fields.map((f) => f.id)).not.toContain('_ckql_total');
});

it('answers a search up to the portal\'s rows_max with one SELECT', async () => {
  log.length = 0;
  const result = await sql.search('from enrolments where grade >= 1 limit 4000');
  expect(result.records).toHaveLength(4000);
  expect(log.filter((line) => line.includes('datastore_search_sql'))).toHaveLength(1);
});

describe('searchAll with the sql target', () => {
  const all = async (client: DatastoreClient, query: string, pageSize: number): Promise<Row[]> => {
    const rows: Row[] = [];
    for await (const row of client.searchAll(query, { pageSize })) rows.push(row);
    return rows;
  };

  it('pages with LIMIT and OFFSET through datastore_search_sql: the records of the 2.11 plan, in order', async () => {
    const query = 'from enrolments where course = MATH-106 and grade >= 5 and status != withdrawn order by grade desc, student select student, grade offset 2';
    log.length = 0;
    const bySql = await all(sql, query, 7);
    const sqlCalls = log.filter((line) => line.includes('datastore_search_sql')).length;
    expect(log.filter((line) => / \/api\/action\/datastore_search /.test(line))).toEqual([]);
    const byPlan = await all(planned, query, 7);
    expect(bySql.length).toBe(evaluateQuery(`${query} limit 32000`, enrolments).records.length);
    expect(bySql.length).toBeGreaterThan(7 * 3);
    expect(bySql).toEqual(byPlan);
    // A page of 7 at a time: the last page is short (or the total says it was the last).
    expect(sqlCalls).toBe(Math.ceil(bySql.length / 7) + (bySql.length % 7 === 0 ? 1 : 0));
    const limited = await all(sql, `${query} limit 10`, 4);
    expect(limited).toEqual(byPlan.slice(0, 10));
  });

  it('select distinct pages without repeating or losing a row (its fields break ties)', async () => {
    const query = 'from enrolments where course = MATH-106 and grade >= 4 select distinct status, term order by status';
    const rows = await all(sql, query, 3);
    const keys = rows.map((r) => `${String(r['status'])}|${String(r['term'])}`);
    expect(new Set(keys).size).toBe(keys.length);
    const reference = evaluateQuery(`${query} limit 32000`, enrolments).records.map((r) => `${String(r['status'])}|${String(r['term'])}`);
    expect([...keys].sort()).toEqual([...reference].sort());
    expect(rows.map((r) => r['status'])).toEqual(reference.map((k) => k.split('|')[0]));
  });

  it('goes on past a page the portal cut at its rows_max (records_truncated)', async () => {
    const client = connect({ url: capped.url, retries: 0, target: 'sql' });
    try {
      const query = 'from enrolments where course = MATH-106 and grade >= 5 and status != withdrawn order by student select student';
      const rows = await all(client, query, 12);
      expect(rows).toEqual(await all(planned, query, 12));
      expect(rows.length).toBeGreaterThan(12);
    } finally {
      await client.close();
    }
  });
});

describe('colons, which CKAN\'s SQLAlchemy text() reads as bind parameters', () => {
  it.each([
    ['from colons where title = "a :b" select title', ['a :b']],
    ['from colons where title in (":start", "10:30", "x::y") select title', ['10:30', 'x::y', ':start']],
    ['from colons where title like "%:%" and title != "a \\\\:b" select title', ['a :b', '10:30', 'x::y', ':start']],
    ['from colons where title = "a \\\\:b" select title', ['a \\:b']],
    ['from colons where `x :y` >= 5 select title, `x :y`', ['a \\:b', 'plain']],
  ])('%s: the sql target writes \\: and `ckql serve` reads it back as CKAN does', async (query, titles) => {
    const { sql: text } = compile(query, { target: 'sql' });
    expect(text).toContain('\\:');
    expect(readSqlText(text)).not.toHaveProperty('bindParameter');
    const bySql = await sql.search(query);
    expect(bySql.records.map((r) => r['title'])).toEqual(titles);
    expect(bySql.records).toEqual((await planned.search(query)).records);
  });

  const searchSql = async (text: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await request(`${server.url}/api/3/action/datastore_search_sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: text }),
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
  };

  it('a bare :name is a bind parameter with no value, an error that says how to write the colon', async () => {
    const { status, body } = await searchSql(`SELECT title FROM "colons" WHERE title = 'a :b'`);
    expect(status).toBe(409);
    expect(JSON.stringify(body['error'])).toContain("A value is required for bind parameter 'b'");
  });

  it('\\: reaches PostgreSQL as :, and :: and 10:30 are no parameters', async () => {
    const { status, body } = await searchSql(`SELECT title FROM "colons" WHERE title IN ('a \\:b', '10:30') OR title::text = 'x::y' ORDER BY _id`);
    expect(status).toBe(200);
    expect((body['result'] as { records: unknown[] }).records).toEqual([{ title: 'a :b' }, { title: '10:30' }, { title: 'x::y' }]);
  });
});

describe('a portal without datastore_search_sql', () => {
  it('is told as the sql target being wrong for it, a usage error that says what to use instead, after one request', async () => {
    // A memory engine has no SQL: the server answers as CKAN with the action disabled (400, "Action name not known").
    for (const ckan of ['2.11', '2.12'] as const) {
      const seen: string[] = [];
      const portal = await startServer({ tables: [enrolments], port: 0, ckan, log: (line) => seen.push(line) });
      const client = connect({ url: portal.url, retries: 0, target: 'sql' });
      try {
        const error = await client.search('from enrolments where course like "MATH%" limit 3').then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(ToolError);
        expect(error).toMatchObject({ code: 'USAGE' });
        expect(exitCodeFor(error)).toBe(2);
        expect((error as ToolError).message).toMatch(/does not answer datastore_search_sql/);
        expect((error as ToolError).hint).toMatch(/ckan-2\.11 or ckan-2\.12 target/);
        expect(seen).toHaveLength(1);
      } finally {
        await client.close();
        await portal.close();
      }
    }
  });
});
