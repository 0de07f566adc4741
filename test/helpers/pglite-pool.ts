/**
 * PGlite instances shared by the test files one worker runs (vitest's
 * `isolate: false`, vitest.config.ts). Starting one costs a quarter of a
 * second of CPU, and the suite started about forty; a worker now starts as
 * many as it holds at once.
 *
 * A file borrows an instance as good as a new one: at its release the
 * instance's session state is discarded, its `public` schema dropped and
 * made again with CKAN's set-up (as the cached start-up cluster has it,
 * src/engine/pglite/db.ts), and its catalogue compared with a new
 * instance's. One that differs (something outside `public`, an open
 * transaction) is closed instead of kept, so no file sees another's
 * leftovers.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { Db } from '../../src/engine/sql/db.js';
import { pgliteDb, startPglite, startTextPglite } from '../../src/engine/pglite/db.js';
import { DATASTORE_SETUP_MARK_SQL, DATASTORE_SETUP_SQL } from '../../src/engine/sql/layout.js';

/** `text`: values as PostgreSQL's text, as the pglite engine reads them; `native`: PGlite's own parsers. */
type Values = 'text' | 'native';

const idle: Record<Values, PGlite[]> = { text: [], native: [] };
/** The catalogue of a new instance (the same for both kinds), taken from the first one started. */
let fresh: string | undefined;

/** What a new instance holds outside PostgreSQL's own schemas: relations, functions, types, the set-up's mark. */
async function catalogue(pg: PGlite): Promise<string> {
  const { rows } = await pg.query<{ item: string }>(`
    SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text AS item FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL SELECT n.nspname || '.' || p.proname || '()' || coalesce(obj_description(p.oid, 'pg_proc'), '') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT n.nspname || '.' || t.typname || ':type' FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL SELECT 'schema ' || nspname FROM pg_namespace
    UNION ALL SELECT 'extension ' || extname FROM pg_extension
    ORDER BY 1`);
  return rows.map((row) => row.item).join('\n');
}

async function start(values: Values): Promise<PGlite> {
  const pg = values === 'text' ? await startTextPglite() : await startPglite();
  fresh ??= await catalogue(pg);
  return pg;
}

/** Empties a returned instance; whether it now holds what a new one does. */
async function reset(pg: PGlite): Promise<boolean> {
  try {
    await pg.query('DISCARD ALL');
    await pg.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    await pg.transaction(async (tx) => {
      for (const sql of [...DATASTORE_SETUP_SQL, DATASTORE_SETUP_MARK_SQL]) await tx.query(sql);
    });
    return (await catalogue(pg)) === fresh;
  } catch {
    return false;
  }
}

async function release(values: Values, pg: PGlite): Promise<void> {
  if (!pg.closed && (await reset(pg))) idle[values].push(pg);
  else if (!pg.closed) await pg.close();
}

/**
 * A PGlite in memory with PGlite's own value parsers (as `startPglite`
 * gives); `release` hands it back for the next file.
 * @example
 * const { pg, release } = await borrowPglite();
 * await pg.query('SELECT 1');
 * await release();
 */
export async function borrowPglite(): Promise<{ readonly pg: PGlite; readonly release: () => Promise<void> }> {
  const pg = idle.native.pop() ?? (await start('native'));
  return { pg, release: once(() => release('native', pg)) };
}

/**
 * A database in memory as `openPglite()` opens one; its `close` hands the
 * instance back for the next file instead of closing it.
 * @example
 * const db = await borrowPgliteDb();
 * const engine = sqlEngine(db, { kind: 'pglite', label: 'pglite (in memory)' });
 * await engine.close(); // db.close(): back in the pool
 */
export async function borrowPgliteDb(): Promise<Db> {
  const pg = idle.text.pop() ?? (await start('text'));
  return { ...pgliteDb(pg), close: once(() => release('text', pg)) };
}

/** A release that runs once: a second `close` must not put the instance in the pool twice (two files would share it). */
function once(run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= run());
}
