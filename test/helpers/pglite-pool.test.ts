/**
 * The worker's pool of PGlite instances (test/helpers/pglite-pool.ts): a
 * returned instance is lent again only when it holds what a new one holds.
 */
import { describe, expect, it } from 'vitest';
import { startPglite } from '../../src/engine/pglite/db.js';
import { borrowPglite, borrowPgliteDb } from './pglite-pool.js';

/** What a file could leave behind, read the same way on any instance. */
async function leftovers(pg: Awaited<ReturnType<typeof startPglite>>): Promise<unknown> {
  const tables = await pg.query<{ name: string }>(`SELECT relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1`);
  const timeout = await pg.query<{ statement_timeout: string }>('SHOW statement_timeout');
  return { tables: tables.rows.map((row) => row.name), timeout: timeout.rows[0]?.statement_timeout };
}

describe('the PGlite pool', () => {
  it('lends a returned instance again, emptied: no table, view or setting of the file before', async () => {
    const pristine = await startPglite();
    const want = await leftovers(pristine);
    await pristine.close();

    const first = await borrowPglite();
    await first.pg.exec(`CREATE TABLE "left" (a int); CREATE VIEW "alias" AS SELECT * FROM "left"; INSERT INTO "left" VALUES (1)`);
    await first.pg.query(`SET statement_timeout = 5000`);
    await first.release();
    const second = await borrowPglite();
    try {
      expect(second.pg).toBe(first.pg);
      expect(await leftovers(second.pg)).toEqual(want);
      // and CKAN's set-up is there again, as in the cached start-up cluster
      const setUp = await second.pg.query(`SELECT 1 FROM pg_proc WHERE proname = 'populate_full_text_trigger'`);
      expect(setUp.rows).toHaveLength(1);
    } finally {
      await second.release();
    }
  });

  it('closes an instance that holds something the reset does not remove, instead of lending it', async () => {
    const first = await borrowPglite();
    await first.pg.exec('CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.t (a int)');
    await first.release();
    expect(first.pg.closed).toBe(true);
    const second = await borrowPglite();
    try {
      expect(second.pg).not.toBe(first.pg);
    } finally {
      await second.release();
    }
  });

  it('takes an instance back once, however often it is closed', async () => {
    const db = await borrowPgliteDb();
    await db.close();
    await db.close();
    const a = await borrowPgliteDb();
    const b = await borrowPgliteDb();
    try {
      await a.transaction((tx) => tx.query('CREATE TABLE only_in_a (x int)'));
      const seen = await b.transaction((tx) => tx.query(`SELECT to_regclass('public.only_in_a') AS t`));
      expect(seen.rows).toEqual([{ t: null }]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
