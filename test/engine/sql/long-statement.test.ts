/**
 * One long statement does not hold up the server: while a
 * `datastore_search_sql` cross join runs, another search is answered, and
 * the long one is stopped at the statement timeout with CKAN 2.11.5's 409
 * (`Query took too long`; `Search took too long` for `datastore_search`,
 * ckanext/datastore/backend/postgres.py). On PGlite the statement runs in
 * a thread of its own that is ended at the timeout and started again
 * (src/engine/pglite/thread-db.ts); on a server, PostgreSQL's own
 * `statement_timeout` stops it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../src/server/server.js';
import type { RunningServer } from '../../../src/server/server.js';
import { pgliteEngine } from '../../../src/engine/pglite/engine.js';
import { sqlEngine } from '../../../src/engine/sql/engine.js';
import type { SqlEngine } from '../../../src/engine/sql/engine.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';

const nums = typedTable('nums', [['n', 'int'], ['word', 'text']], Array.from({ length: 5_000 }, (_, i) => ({ n: i, word: `w${i} common` })));
/** 10⁹ rows of generate_series (on CKAN's allow-list), joined: minutes of work on either engine, with no big table to load. */
const CROSS_JOIN = 'SELECT count(*) FROM "nums" a, generate_series(1, 1000000000) b';
const TIMEOUT_MS = 1_500;

const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

let tested: TestEngines | undefined;
let threaded: SqlEngine | undefined;
/** The engine named, over `nums`, with a statement timeout of `statementTimeout` ms. */
async function engineWithTimeout(name: 'pglite' | 'postgres', statementTimeout: number): Promise<SqlEngine> {
  if (name === 'pglite') {
    // The engine `ckql serve --engine pglite` opens: its own threads, a reader beside the primary.
    if (threaded === undefined) {
      const engine = await pgliteEngine({ tables: [nums], load: { indexes: false }, threads: 2 });
      closing.push(() => engine.close());
      threaded = engine;
    }
    return sqlEngine(threaded.db, { kind: 'pglite', label: 'pglite', statementTimeout });
  }
  if (tested === undefined) {
    const engines = await openTestEngines([nums]);
    closing.push(() => engines.close());
    tested = engines;
  }
  return sqlEngine(tested.get('postgres').db, { kind: 'postgres', label: 'postgres', statementTimeout });
}

async function serve(engine: SqlEngine): Promise<RunningServer> {
  const server = await startServer({ engine, port: 0 });
  closing.push(() => server.close());
  return server;
}

const get = async (server: RunningServer, action: string, params: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(`${server.url}/api/3/action/${action}?${new URLSearchParams(params).toString()}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe.each(engineNames)('%s', (name) => {
  it('answers a search while a long datastore_search_sql runs, and stops the long one with 409 Query took too long', async () => {
    const server = await serve(await engineWithTimeout(name, TIMEOUT_MS));
    const finished: string[] = [];
    const long = get(server, 'datastore_search_sql', { sql: CROSS_JOIN }).finally(() => finished.push('long'));
    // The long statement is under way before the other search is sent.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const short = await get(server, 'datastore_search', { resource_id: 'nums', filters: JSON.stringify({ n: 7 }) }).finally(() => finished.push('short'));
    expect(short.status).toBe(200);
    expect((short.body['result'] as { records: unknown[] }).records).toEqual([{ _id: 8, n: 7, word: 'w7 common' }]);
    const stopped = await long;
    expect(finished).toEqual(['short', 'long']);
    expect(stopped.status).toBe(409);
    expect(stopped.body['error']).toEqual({ __type: 'Validation Error', query: ['Query took too long'] });
    // The engine answers again after the stop (PGlite's thread was started again, the table still there).
    const after = await get(server, 'datastore_search_sql', { sql: 'SELECT count(*) AS n FROM "nums"' });
    expect(after.body['result']).toMatchObject({ records: [{ n: 5000 }] });
  }, 60_000);

  it('a datastore_search past the statement timeout is 409 Search took too long', async () => {
    const server = await serve(await engineWithTimeout(name, 1));
    const slow = await get(server, 'datastore_search', { resource_id: 'nums', q: 'common', sort: 'word desc', limit: '32000' });
    expect(slow.status).toBe(409);
    expect(slow.body['error']).toEqual({ __type: 'Validation Error', query: ['Search took too long'] });
  }, 60_000);
});
