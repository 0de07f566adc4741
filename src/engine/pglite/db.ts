/**
 * PGlite (PostgreSQL compiled to WebAssembly, in the process) as a `Db`.
 * One connection: transactions queue behind each other. Values come back as
 * PostgreSQL's text (as from a server with `pg`'s parsers turned off), so
 * both PostgreSQL engines read one form.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, PgError, SqlRows, SqlSession } from '../sql/db.js';
import { SQLSTATE } from '../sql/db.js';

/** Every type PGlite would parse, read as text instead. */
const TEXT_PARSERS: Record<number, (text: string) => string> = Object.fromEntries(
  Object.values(types as Record<string, unknown>)
    .filter((oid): oid is number => typeof oid === 'number')
    .map((oid) => [oid, (text: string) => text]),
);

/**
 * Every type PGlite would serialize, with a text sent as it is: PostgreSQL
 * then reads it into the parameter's type and refuses what the type cannot
 * hold with its own error (`invalid input syntax for type boolean`), as it
 * does for `pg` and the `postgres` engine. PGlite's own serializers throw a
 * plain `Error` for a text they do not take (`"maybe"` for a boolean).
 */
const DEFAULT_SERIALIZERS = types.serializers as Record<number | string, (value: unknown) => string>;
const TEXT_SERIALIZERS: Record<number, (value: unknown) => string> = Object.fromEntries(
  Object.keys(DEFAULT_SERIALIZERS)
    .filter((key) => /^\d+$/.test(key))
    .map((key) => {
      const serialize = DEFAULT_SERIALIZERS[key] as (value: unknown) => string;
      return [Number(key), (value: unknown) => (typeof value === 'string' ? value : serialize(value))];
    }),
);

/**
 * A fresh in-memory database. Most of PGlite's start-up is `initdb`; a new
 * cluster is the same every time, so its files are kept once in the user's
 * cache (`$XDG_CACHE_HOME/ckql` or `~/.cache/ckql`, per PGlite version) and
 * later starts load them instead (about 5x faster). Any trouble with the
 * cache falls back to a plain start.
 */
async function freshDatabase(dataDir?: string): Promise<PGlite> {
  const where = dataDir === undefined ? {} : { dataDir };
  const file = await templateFile();
  if (file !== undefined) {
    try {
      const template = await readFile(file);
      return await PGlite.create({ ...where, loadDataDir: new Blob([template]), parsers: TEXT_PARSERS, serializers: TEXT_SERIALIZERS });
    } catch {
      // a missing or broken template: start from initdb (and write a new one)
    }
  }
  const pg = await PGlite.create({ ...where, parsers: TEXT_PARSERS, serializers: TEXT_SERIALIZERS });
  if (file !== undefined) {
    try {
      const dump = await pg.dumpDataDir('none');
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const partial = `${file}.${process.pid}.part`;
      await writeFile(partial, new Uint8Array(await dump.arrayBuffer()), { mode: 0o600 });
      await rename(partial, file);
    } catch {
      // no cache this time
    }
  }
  return pg;
}

/** A directory PGlite has initialised (it holds `PG_VERSION`). */
async function holdsDatabase(dataDir: string): Promise<boolean> {
  try {
    await readFile(join(dataDir, 'PG_VERSION'));
    return true;
  } catch {
    return false;
  }
}

async function templateFile(): Promise<string | undefined> {
  try {
    const main = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
    const pkg = JSON.parse(await readFile(join(dirname(main), '..', 'package.json'), 'utf8')) as { version?: string };
    const cache = process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
    return join(cache, 'ckql', `pglite-${pkg.version ?? 'unknown'}-initdb.tar`);
  } catch {
    return undefined;
  }
}

/** PostgreSQL's error for a cancelled statement, as a server sends it. */
function queryCanceled(message: string): PgError {
  return Object.assign(new Error(message), { code: SQLSTATE.queryCanceled, severity: 'ERROR' });
}

function cancelled(signal: AbortSignal): PgError {
  return Object.assign(queryCanceled('canceling statement due to user request'), { cause: signal.reason as unknown });
}

/**
 * Opens PGlite: a fresh database in memory, or the one kept in `dataDir`
 * (created when missing).
 * @example
 * const db = await openPglite();            // in memory, gone at close
 * const kept = await openPglite('./ckql-db'); // kept between runs
 */
export async function openPglite(dataDir?: string): Promise<Db> {
  const pg = dataDir === undefined || !(await holdsDatabase(dataDir)) ? await freshDatabase(dataDir) : await PGlite.create({ dataDir, parsers: TEXT_PARSERS, serializers: TEXT_SERIALIZERS });
  const session = (run: Pick<PGlite, 'query'>): SqlSession => ({
    query: async (sql, params = []) => {
      const result = await run.query<Record<string, unknown>>(sql, params as unknown[]);
      return { rows: result.rows, fields: result.fields } satisfies SqlRows;
    },
    copyFrom: async (sql, csv) => {
      // PGlite reads COPY input from a blob it names /dev/blob.
      await run.query(sql.replace(/FROM STDIN/, "FROM '/dev/blob'"), [], { blob: new Blob([csv]) });
    },
  });
  return {
    kind: 'pglite',
    transaction: (work, options = {}) => {
      const { signal, statementTimeout } = options;
      if (signal?.aborted === true) return Promise.reject(cancelled(signal));
      const run = pg.transaction(async (tx) => {
        if (options.readOnly === true) await tx.query('SET TRANSACTION READ ONLY');
        const inner = session(tx);
        // A statement runs to its end in the process: the signal and the timeout are checked when it ends,
        // and a statement that ran too long or was cancelled meanwhile fails as PostgreSQL's would (57014).
        const aborted = (): boolean => signal?.aborted === true;
        const checked = async <T>(statement: () => Promise<T>): Promise<T> => {
          if (aborted()) throw cancelled(signal as AbortSignal);
          const started = performance.now();
          const value = await statement();
          if (aborted()) throw cancelled(signal as AbortSignal);
          if (statementTimeout !== undefined && performance.now() - started > statementTimeout) throw queryCanceled('canceling statement due to statement timeout');
          return value;
        };
        return work({
          query: (sql, params) => checked(() => inner.query(sql, params)),
          copyFrom: (sql, csv) => checked(() => inner.copyFrom(sql, csv)),
        });
      });
      if (signal === undefined) return run;
      // A transaction still waiting for the one connection is given up at once; when its turn comes,
      // its first statement sees the signal and it rolls back without running anything.
      return new Promise((resolve, reject) => {
        const onAbort = (): void => reject(cancelled(signal));
        signal.addEventListener('abort', onAbort, { once: true });
        run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
      });
    },
    close: () => pg.close(),
  };
}
