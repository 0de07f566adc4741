/**
 * The PostgreSQL engines a test runs on: PGlite always; a real server when
 * `CKQL_TEST_PG_URL` names one (`.ci/run` and `scripts/pg-test-cluster.sh`
 * start one). Under `CI=true` a missing server is a failure, not a skip.
 * Each test file gets its own database on the server, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Table } from '../../../src/datastore/types.js';
import { postgresEngine } from '../../../src/engine/postgres/engine.js';
import { sqlEngine } from '../../../src/engine/sql/engine.js';
import type { SqlEngine } from '../../../src/engine/sql/engine.js';
import { loadTables } from '../../../src/engine/sql/load.js';
import { resourceIdFor } from '../../../src/engine/memory/load.js';
import { borrowPgliteDb } from '../../helpers/pglite-pool.js';

export const serverUrl = process.env['CKQL_TEST_PG_URL'];
export const ci = process.env['CI'] === 'true' || process.env['CI'] === '1';

/** Engine names to run `describe.each` over. */
export const engineNames: readonly ('pglite' | 'postgres')[] = serverUrl !== undefined || ci ? ['pglite', 'postgres'] : ['pglite'];

export interface TestEngines {
  get(name: 'pglite' | 'postgres'): SqlEngine;
  close(): Promise<void>;
}

/**
 * The pglite engine with `tables`, as `pgliteEngine({ tables, load: { indexes: false } })` opens it (what
 * that function does: `openPglite()`, `loadTables`, `sqlEngine`), on an instance of the worker's pool
 * (test/helpers/pglite-pool.ts): closing the engine hands the instance back.
 */
export async function pooledPgliteEngine(tables: readonly Table[]): Promise<SqlEngine> {
  const db = await borrowPgliteDb();
  try {
    if (tables.length > 0) await loadTables(db, tables, { indexes: false, replace: true });
  } catch (error) {
    await db.close();
    throw error;
  }
  return sqlEngine(db, { kind: 'pglite', label: 'pglite (in memory)' });
}

/** Opens each engine of `engineNames` loaded with `tables` (no full-text indexes: same answers, faster). */
export async function openTestEngines(tables: readonly Table[]): Promise<TestEngines> {
  const engines = new Map<string, SqlEngine>();
  let dropDatabase: (() => Promise<void>) | undefined;
  engines.set('pglite', await pooledPgliteEngine(tables));
  if (engineNames.includes('postgres')) {
    if (serverUrl === undefined) throw new Error('CI=true but CKQL_TEST_PG_URL is not set: .ci/run starts a PostgreSQL cluster for these tests');
    const name = `ckql_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const engine = await postgresEngine({ url: url.toString(), max: 3 });
    await loadTables(engine.db, tables, { indexes: false });
    await engine.refresh();
    engines.set('postgres', engine);
    dropDatabase = async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    };
  }
  return {
    get: (name) => {
      const engine = engines.get(name);
      if (engine === undefined) throw new Error(`no ${name} engine`);
      return engine;
    },
    close: async () => {
      for (const engine of engines.values()) await engine.close();
      await dropDatabase?.();
    },
  };
}

/** A table with explicit CKAN types (the loaders infer theirs; CKAN's fixtures name them). */
export function typedTable(alias: string, fields: readonly [string, string][], rows: readonly Record<string, unknown>[], extra: Partial<Table> = {}): Table {
  return {
    id: extra.id ?? resourceIdFor(alias),
    aliases: [alias],
    fields: [{ id: '_id', type: 'int' }, ...fields.map(([id, type]) => ({ id, type: type as Table['fields'][number]['type'] }))],
    rows: rows.map((row, i) => ({ _id: i + 1, ...row }) as Table['rows'][number]),
    ...extra,
  };
}
