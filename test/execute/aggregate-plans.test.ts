/**
 * Grouped, joined and faceted queries against `ckql serve` on port 0: as
 * CKAN 2.11 and 2.12 plans (pages of `datastore_search` finished by the
 * executor's operators) and as the `sql` target's one statement through
 * `datastore_search_sql` on a PGlite engine, with CKAN's allow-list and
 * `\:` reading. Each gives the memory engine's rows (which
 * test/engine/aggregates.test.ts checks against PostgreSQL's own SQL).
 * Requests are counted at the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import { plan } from '../../src/compile/compile.js';
import type { SqlRequest } from '../../src/compile/sql.js';
import type { Row, SearchRequest } from '../../src/datastore/types.js';
import { memoryEngine } from '../../src/engine/memory/engine.js';
import { pgliteEngine } from '../../src/engine/pglite/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { startServer } from '../../src/server/server.js';
import type { RunningServer } from '../../src/server/server.js';
import { parse } from '../../src/syntax/parse.js';
import { cases, expectSameRows, tables } from '../helpers/aggregate-fixtures.js';
import { engineNames, openTestEngines } from '../engine/sql/engines.js';
import type { TestEngines } from '../engine/sql/engines.js';

const memory = memoryEngine(tables);
/** Every datastore_search request the 2.11 and 2.12 servers answered, in order. */
const seen: SearchRequest[] = [];
const recording = {
  ...memory,
  search: (request: SearchRequest, options?: Parameters<Engine['search']>[1]) => {
    seen.push(request);
    return memory.search(request, options);
  },
};

let servers: RunningServer[] = [];
let clients: Record<'ckan-2.11' | 'ckan-2.12' | 'sql', DatastoreClient> & { 'sql on postgres'?: DatastoreClient };
let sqlEngine: Engine & { close(): Promise<void> };
/** a real PostgreSQL server's engine (CKQL_TEST_PG_URL), to run the sql target's text on PostgreSQL itself */
let engines: TestEngines | undefined;

beforeAll(async () => {
  sqlEngine = await pgliteEngine({ tables, load: { indexes: false } });
  const [v211, v212, sql] = await Promise.all([
    startServer({ engine: recording, ckan: '2.11', port: 0 }),
    startServer({ engine: recording, ckan: '2.12', port: 0 }),
    startServer({ engine: sqlEngine, ckan: '2.11', port: 0 }),
  ]);
  servers = [v211!, v212!, sql!];
  clients = {
    'ckan-2.11': connect({ url: v211!.url, target: 'ckan-2.11' }),
    'ckan-2.12': connect({ url: v212!.url, target: 'ckan-2.12' }),
    sql: connect({ url: sql!.url, target: 'sql' }),
  };
  if (engineNames.includes('postgres')) {
    engines = await openTestEngines(tables);
    const onPostgres = await startServer({ engine: engines.get('postgres'), ckan: '2.11', port: 0 });
    servers.push(onPostgres);
    clients['sql on postgres'] = connect({ url: onPostgres.url, target: 'sql' });
  }
});

afterAll(async () => {
  for (const client of Object.values(clients ?? {})) await client.close();
  for (const server of servers) await server.close();
  await sqlEngine?.close();
  await engines?.close();
});

async function expected(text: string): Promise<{ rows: Row[]; total: number | undefined }> {
  const stream = await memory.query(parse(text), { total: true });
  const rows: Row[] = [];
  for await (const batch of stream.batches) rows.push(...batch);
  return { rows, total: stream.total };
}

/** The sql target runs on PGlite, and on a real PostgreSQL server where CKQL_TEST_PG_URL names one. */
const targets = ['ckan-2.11', 'ckan-2.12', 'sql', ...(engineNames.includes('postgres') ? (['sql on postgres'] as const) : [])] as const;

describe.each(cases.map(([text]) => text))('%s', (text) => {
  it.each(targets)('on %s gives the memory engine’s rows and total', async (target) => {
    const want = await expected(text);
    const got = await clients[target]!.search(text, { total: true });
    expectSameRows(got.records as Row[], want.rows, `${target}: ${text}`);
    expect(got.total, 'total').toBe(want.total);
  });
});

describe('requests', () => {
  const requestsFor = async (text: string, target: 'ckan-2.11' | 'ckan-2.12' = 'ckan-2.11', options: { total?: boolean } = {}) => {
    seen.length = 0;
    const result = await clients[target].search(text, options);
    return { result, requests: [...seen] };
  };

  it('count(*) alone is one request with limit 0', async () => {
    const { result, requests } = await requestsFor('from courses where subject = math select count(*) as n');
    expect(result.records).toEqual([{ n: 3 }]);
    expect(requests).toEqual([expect.objectContaining({ resource_id: 'courses', filters: { subject: 'math' }, limit: 0 })]);
  });

  it('a group by is a count, then pages with the where pushed down and fields cut to the keys and inputs', async () => {
    const { result, requests } = await requestsFor('from courses where level >= 2 group by online select online, sum(level)', 'ckan-2.12');
    expect(result.records).toEqual([{ online: false, sum_level: 9 }, { online: true, sum_level: 7 }, { online: null, sum_level: 2 }]);
    expect(requests.length).toBe(2);
    expect(requests[0]).toMatchObject({ limit: 0, filters: { level: { gte: 2 } } });
    expect(requests[1]).toMatchObject({ filters: { level: { gte: 2 } }, limit: 32_000 });
    expect([...(requests[1]!.fields ?? [])].sort()).toEqual(['_id', 'level', 'online']);
  });

  it('a join hashes the smaller side and pushes its keys to the other as an in filter', async () => {
    const { result, requests } = await requestsFor('from enrolments e join courses c on e.course = c.code where c.subject = math group by c.subject select c.subject, count(*)');
    expect(result.records).toEqual([{ subject: 'math', count: 4 }]);
    // both sides counted first; then the smaller (3 math courses) read whole; then the enrolments of those courses only
    const enrolmentPages = requests.filter((r) => r.resource_id === 'enrolments' && r.limit !== 0);
    expect(enrolmentPages).toHaveLength(1);
    expect(enrolmentPages[0]!.filters).toEqual({ course: ['M1', 'M2', 'M3'] });
    expect(result.read?.records).toBeLessThan(tables[1]!.rows.length + 3);
  });

  it('--max-scan refuses before any record is read, saying how many in how many requests', async () => {
    const client = connect({ url: servers[0]!.url, target: 'ckan-2.11', maxScan: 5 });
    try {
      seen.length = 0;
      await expect(client.search('from courses group by subject')).rejects.toMatchObject({ code: 'SCAN_TOO_LARGE', message: expect.stringMatching(/9\b.*5\b/s) });
      expect(seen.every((r) => r.limit === 0)).toBe(true);
      seen.length = 0;
      await expect(client.search('from enrolments e left join courses c on e.course = c.code select e.student, c.subject')).rejects.toMatchObject({ code: 'SCAN_TOO_LARGE' });
      expect(seen.every((r) => r.limit === 0)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('explain shows each request, the pages the counts predict, and each local step', async () => {
    const explained = await clients['ckan-2.11'].explain('from enrolments e join courses c on e.course = c.code group by c.subject having count(*) > 1');
    const steps = explained.steps!.join('\n');
    expect(steps).toMatch(/^limit 100/);
    expect(steps).toContain('aggregate group by c.subject: count(*), having count(*) > 1');
    expect(steps).toContain('join join c on e.course = c.code');
    expect(steps).toContain('scan {"resource_id":"enrolments","fields":["_id","course"]}, pages by offset, 32000 records a request, counted first; the count says 9 records: 2 requests (the count, then 1 page)');
  });
});

describe('the sql target on a real CKAN’s checks', () => {
  it('passes datastore_search_sql’s allow-list, with every column aliased and colons in literals written \\:', async () => {
    const text = 'from courses where code != "a:b" and subject != "x:y" group by subject, month(start) select subject, month(start) as m, count(*) as n, avg(credits) having count(*) >= 1 order by n desc limit 3';
    const sql = (plan(text, { target: 'sql' }).request as SqlRequest).sql;
    expect(sql).toContain("'a\\:b'");
    expect(sql).not.toMatch(/[^\\:]:[a-z]/);
    // every output column has its own name: CKAN keeps one of two equal names
    const select = sql.slice('SELECT '.length, sql.indexOf(' FROM '));
    for (const column of select.split(/, (?![^(]*\))/)) expect(column, column).toMatch(/ AS "[^"]+"$/);
    // HAVING and ORDER BY say the expression, not the name (PostgreSQL refuses names there)
    expect(sql).toContain('HAVING count(*) >=');
    expect(sql).toContain('ORDER BY count(*) DESC');
    // the server checks it as CKAN does, and answers it
    const result = await clients.sql.search(text, { total: true });
    expect(result.records.length).toBeGreaterThan(0);
  });

  it('writes min and max of a value of unknown type so PostgreSQL answers them for booleans too (it has no max(boolean))', async () => {
    const text = 'from courses group by level select level, max(online), min(online), min(code)';
    const sql = (plan(text, { target: 'sql' }).request as SqlRequest).sql;
    expect(sql).toContain('(max(CASE WHEN "courses"."online" IS NOT NULL THEN ARRAY["courses"."online"] END))[1] AS "max_online"');
    expect(sql).not.toMatch(/bool_|coalesce|FILTER/);
    // the text as `ckql compile --target sql` prints it, through datastore_search_sql (allow-list and all), is PostgreSQL's bool_or/bool_and
    const { records } = (await clients.sql.action('datastore_search_sql', { sql })) as { records: Row[] };
    const want = await expected(text);
    expectSameRows(records.map(({ _ckql_total: _total, ...rest }) => rest), want.rows, 'datastore_search_sql');
    expect(want.rows.some((r) => r['max_online'] === true) && want.rows.some((r) => r['min_online'] === false)).toBe(true);
  });

  it('qualifies every field of a join, reading each resource’s fields first; without them an unqualified field is UNQUALIFIED_FIELD', async () => {
    const text = 'from enrolments e join courses c on e.course = c.code where subject = math select student, subject, grade order by student, grade';
    // offline (`ckql compile --target sql`): which resource has `subject` is the portal's to say
    let offline: unknown;
    try {
      plan(text, { target: 'sql' });
    } catch (error) {
      offline = error;
    }
    expect(offline).toMatchObject({ code: 'UNQUALIFIED_FIELD', span: { start: text.indexOf('subject'), end: text.indexOf('subject') + 'subject'.length } });
    expect((offline as { hint: string }).hint).toContain('e.subject or c.subject');
    // run against the portal: its fields say which, and the SQL names the table of each
    const explained = await clients.sql.explain(text);
    expect(explained.sql?.text).toContain('WHERE "c"."subject" = \'math\'');
    expect(explained.sql?.text).toContain('SELECT "e"."student" AS "student", "c"."subject" AS "subject", "e"."grade" AS "grade"');
    const got = await clients.sql.search(text, { total: true });
    const want = await expected(text);
    expectSameRows(got.records as Row[], want.rows, 'sql');
    expect(want.rows.length).toBeGreaterThan(0);
    // a field both have is AMBIGUOUS_FIELD, as on every other target, before any SQL is sent
    const both = 'from courses a join courses b on a.code = b.code select subject';
    for (const target of targets) await expect(clients[target]!.search(both), target).rejects.toMatchObject({ code: 'AMBIGUOUS_FIELD', hint: expect.stringContaining('a.subject or b.subject') });
  });

  it('is refused by the server’s allow-list check when a function is not on it (the check runs)', async () => {
    const response = await fetch(`${servers[2]!.url}/api/action/datastore_search_sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT coalesce(subject, \'x\') AS s FROM "courses"' }),
    });
    expect(response.status).toBe(403);
  });
});
