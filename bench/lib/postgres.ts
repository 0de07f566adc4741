/**
 * A throw-away database of a PostgreSQL server for one bench section: the
 * sections that measure PostgreSQL beside ckql load their tables there and
 * drop it afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ckqlModules } from './ckql.js';

/** Creates a database with a fresh name on the server at `url`; `drop` removes it (connections and all). */
export async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ckql_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * `use` over ckql's PostgreSQL engine on a throw-away database holding
 * `tables` (loaded without indexes: the sections time the query alone);
 * the engine is closed and the database dropped afterwards.
 * @example const ms = await withLoadedPostgres(url, [table], (engine) => medianTime(5, () => engine.query(query)));
 */
export async function withLoadedPostgres<T>(
  url: string,
  tables: Parameters<Awaited<ReturnType<typeof ckqlModules.sqlLoad>>['loadTables']>[1],
  use: (engine: Awaited<ReturnType<Awaited<ReturnType<typeof ckqlModules.postgresEngine>>['postgresEngine']>>) => Promise<T>,
): Promise<T> {
  const database = await freshDatabase(url);
  try {
    const [{ postgresEngine }, { loadTables }] = await Promise.all([ckqlModules.postgresEngine(), ckqlModules.sqlLoad()]);
    const engine = await postgresEngine({ url: database.url, max: 2 });
    try {
      await loadTables(engine.db, tables, { indexes: false });
      await engine.refresh();
      return await use(engine);
    } finally {
      await engine.close();
    }
  } finally {
    await database.drop();
  }
}
