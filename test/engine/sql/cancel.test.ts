/**
 * Statement timeouts and cancellation: a search that runs past the engine's
 * `statement_timeout` is CKAN's 409 `Search took too long` (`Query took too
 * long` for SQL), on both engines; an aborted signal cancels the statement
 * on the server (`pg_cancel_backend`) and the search rejects with `ABORTED`.
 * PGlite runs a statement to its end in the process: there the timeout and
 * the signal drop the answer when the statement ends, and a search still
 * waiting for its one connection is given up at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../src/server/server.js';
import { sqlEngine } from '../../../src/engine/sql/engine.js';
import type { SqlEngine } from '../../../src/engine/sql/engine.js';
import type { TestEngines } from './engines.js';
import { engineNames, openTestEngines, typedTable } from './engines.js';
import { datastoreFailure as failure } from '../../helpers/outcome.js';

const big = typedTable('big', [['word', 'text']], [{ word: 'seed' }]);

let engines: TestEngines;
const slow = new Map<string, SqlEngine>();
beforeAll(async () => {
  engines = await openTestEngines([big]);
  for (const name of engineNames) {
    const engine = engines.get(name);
    // Enough rows that a full-text count takes well over a millisecond.
    await engine.db.transaction((tx) => tx.query(`INSERT INTO "${big.id}" (word) SELECT 'w' || i || ' common' FROM generate_series(1, 30000) AS i`));
    slow.set(name, sqlEngine(engine.db, { kind: engine.kind as 'pglite' | 'postgres', label: 'slow', statementTimeout: 1 }));
  }
}, 120_000);
afterAll(async () => {
  await engines?.close();
});

/**
 * Another transaction holding `big` in ACCESS EXCLUSIVE mode, so a search of
 * it waits on the server until it is cancelled or `release` is called.
 */
function lockBig(engine: SqlEngine): { isLocked: Promise<void>; release: () => void; holder: Promise<unknown> } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked = (): void => undefined;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = engine.db.transaction(async (tx) => {
    await tx.query(`LOCK TABLE "${big.id}" IN ACCESS EXCLUSIVE MODE`);
    locked();
    await held;
  });
  return { isLocked, release: () => release(), holder };
}

/** Statements of this database waiting on a lock. */
async function lockWaiters(engine: SqlEngine): Promise<number> {
  const rows = await engine.db.transaction((tx) => tx.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`));
  return rows.rows.length;
}

describe.each(engineNames)('%s', (name) => {
  it('an already aborted signal rejects with ABORTED before any statement', async () => {
    const error = await failure(engines.get(name).search({ resource_id: 'big' }, { signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORTED');
  });
});

for (const name of engineNames) {
  // A server stops the statement at the timeout; PGlite finishes it and then drops the answer the same way.
  it(`${name}: a search past the statement timeout is 409 Search took too long; SQL is Query took too long`, async () => {
    const engine = slow.get(name) as SqlEngine;
    const error = await failure(engine.search({ resource_id: 'big', q: 'common', sort: 'word desc' }));
    expect(error.body).toEqual({ __type: 'Validation Error', query: ['Search took too long'] });
    const sql = await failure((engine.searchSql as NonNullable<SqlEngine['searchSql']>)(`SELECT count(*) FROM big WHERE word LIKE '%9%'`));
    expect(sql.body).toEqual({ __type: 'Validation Error', query: ['Query took too long'] });
    // The same searches answer within the default timeout.
    expect((await engines.get(name).search({ resource_id: 'big', q: 'common', limit: 1 })).total).toBe(30000);
  });
}

describe('pglite: one connection in the process', () => {
  it('a search waiting behind another transaction is given up at once when aborted, and never runs', async () => {
    const engine = engines.get('pglite');
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = (): void => undefined;
    const isHeld = new Promise<void>((resolve) => (started = resolve));
    const holder = engine.db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      started();
      await held;
    });
    await isHeld;
    const controller = new AbortController();
    const search = engine.search({ resource_id: 'big', limit: 1 }, { signal: controller.signal });
    controller.abort();
    // Rejected while the holder still holds the connection.
    expect((await failure(search)).code).toBe('ABORTED');
    release();
    await holder;
    expect((await engine.search({ resource_id: 'big', limit: 1 })).total).toBe(30001);
  });

  it('a transaction aborted between statements stops there and rolls back', async () => {
    const engine = engines.get('pglite');
    const controller = new AbortController();
    let ran = 0;
    const error = await engine.db
      .transaction(async (tx) => {
        await tx.query(`INSERT INTO "${big.id}" (word) VALUES ('aborted')`);
        ran++;
        controller.abort();
        await tx.query('SELECT 1');
        ran++;
      }, { signal: controller.signal })
      .then(() => undefined, (e: unknown) => e as { code?: string });
    expect(error?.code).toBe('57014');
    expect(ran).toBe(1);
    expect((await engine.search({ resource_id: 'big', filters: { word: 'aborted' } })).total).toBe(0);
  });
});

// Only a server can stop a statement while it runs: PGlite runs each statement to its end inside this process.
for (const name of engineNames.filter((n) => n === 'postgres')) {
  it(`${name}: aborting cancels the running statement on the server`, async () => {
    const engine = engines.get(name);
    // Another transaction holds the table, so the search's statement waits on the server until it is cancelled.
    const { isLocked, release, holder } = lockBig(engine);
    await isLocked;
    const controller = new AbortController();
    const search = engine.search({ resource_id: 'big', q: 'common' }, { signal: controller.signal });
    while ((await lockWaiters(engine)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await failure(search);
    release();
    await holder;
    expect(error.code).toBe('ABORTED');
    // The pool is still usable afterwards.
    expect((await engine.search({ resource_id: 'big', limit: 1 })).total).toBe(30001);
  });
}

// A client that goes away mid-request cancels its statement on the server, for both actions.
for (const name of engineNames.filter((n) => n === 'postgres')) {
  it.each([
    ['datastore_search', { resource_id: 'big', q: 'common' }],
    ['datastore_search_sql', { sql: 'SELECT count(*) FROM big' }],
  ])(`${name}: a client that goes away cancels its %s statement`, async (action, body) => {
    const engine = engines.get(name);
    const server = await startServer({ engine, port: 0 });
    const { isLocked, release, holder } = lockBig(engine);
    try {
      await isLocked;
      const waiters = (): Promise<number> => lockWaiters(engine);
      const client = new AbortController();
      const request = fetch(`${server.url}/api/3/action/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: client.signal }).catch(
        () => undefined,
      );
      while ((await waiters()) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      client.abort();
      await request;
      // The statement is cancelled while the lock is still held: nobody waits on it any more.
      while ((await waiters()) > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await waiters()).toBe(0);
    } finally {
      release();
      await holder;
      await server.close();
    }
  });
}
