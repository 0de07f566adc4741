/**
 * The `sql` target end to end: the client sends one datastore_search_sql
 * SELECT to `ckql serve` over the PGlite engine (CKAN's table layout), and
 * gets the records, order and total that the ckan-2.11 plan and the
 * reference walker give.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../../src/client/connect.js';
import type { DatastoreClient } from '../../src/client/types.js';
import type { Table } from '../../src/datastore/types.js';
import { evaluateQuery } from '../../src/engine/memory/evaluate-query.js';
import { loadResources } from '../../src/engine/memory/load.js';
import { openEngine } from '../../src/engine/open.js';
import type { Engine } from '../../src/engine/types.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { repoRoot } from '../cli/run-ckql.js';

const data = join(repoRoot, 'examples', 'data');
let engine: Engine;
let server: RunningServer;
let sql: DatastoreClient;
let planned: DatastoreClient;
let enrolments: Table;

beforeAll(async () => {
  engine = await openEngine({ engine: 'pglite', data: [data] });
  server = await startServer({ engine, port: 0 });
  sql = connect({ url: server.url, retries: 0, target: 'sql' });
  planned = connect({ url: server.url, retries: 0, target: 'ckan-2.11' });
  enrolments = (await loadResources([data], { only: ['enrolments'] })).find((t) => t.aliases.includes('enrolments'))!;
}, 60_000);

afterAll(async () => {
  await sql?.close();
  await planned?.close();
  await server?.close();
  await engine?.close();
});

it.each([
  'from enrolments where grade >= 5.5 and status != withdrawn order by student select student, grade, status limit 7',
  'from enrolments where (course = MATH-106 or term = "2024-autumn") and grade between 4 and 5 order by grade desc, student select student, course, term, grade limit 6 offset 3',
  'from enrolments where status not in (completed, withdrawn) and enrolled_on is not null order by enrolled_on desc nulls last select student, status, enrolled_on limit 4',
])('%s: the same records and total as the 2.11 plan and the reference walker', async (query) => {
  const bySql = await sql.search(query);
  const byPlan = await planned.search(query);
  const reference = evaluateQuery(query, enrolments);
  expect(bySql.records).toEqual(byPlan.records);
  expect(bySql.total).toBe(byPlan.total);
  expect(bySql.total).toBe(reference.total);
  expect(bySql.records.map((r) => r['student'])).toEqual(reference.records.map((r) => r['student']));
  expect(bySql.fields.map((f) => f.id)).not.toContain('_ckql_total');
});
