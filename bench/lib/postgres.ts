/**
 * A throw-away database of a PostgreSQL server for one bench section: the
 * sections that measure PostgreSQL beside ckql load their tables there and
 * drop it afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

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
