/**
 * PGlite (PostgreSQL compiled to WebAssembly) as a `Db`, in the thread that
 * runs it: pglite-worker.ts's, for `openPglite` (thread-db.ts), or the
 * caller's, for code that holds a PGlite itself (`pgliteDb`).
 * One connection: transactions queue behind each other. Values come back as
 * PostgreSQL's text (as from a server with `pg`'s parsers turned off), so
 * both PostgreSQL engines read one form.
 */
import { PGlite, types } from '@electric-sql/pglite';
import type { PGliteOptions } from '@electric-sql/pglite';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, PgError, SqlRows, SqlSession } from '../sql/db.js';
import { SQLSTATE } from '../sql/db.js';
import { DATASTORE_SETUP_MARK, DATASTORE_SETUP_MARK_SQL, DATASTORE_SETUP_SQL } from '../sql/layout.js';

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
 * PostgreSQL's settings for PGlite, beyond PGlite's own. Start-up zeroes the
 * whole buffer pool inside WebAssembly: PostgreSQL's default 128 MB cost
 * most of a start's time and memory, and a pool over files that live in
 * memory (or the page cache) saves little (searches took as long with 1 MB
 * as with 128 MB). `wal_level=minimal` lets a
 * `COPY` into a table created in the same transaction (every load here)
 * skip the write-ahead log. Start-up figures: BENCHMARKS.md, section 7
 * (the `ckql` bin's wasm tiering: src/cli/wasm-tiering.ts).
 */
const START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams,
  '-c', 'shared_buffers=8MB',
  '-c', 'wal_level=minimal',
  '-c', 'max_wal_senders=0',
];

/** How values cross between JavaScript and PostgreSQL: PGlite's parsers and serializers. */
type Values = Pick<PGliteOptions, 'parsers' | 'serializers'>;
/** Values as PostgreSQL's text, both ways (what `openPglite` reads). */
const TEXT_VALUES: Values = { parsers: TEXT_PARSERS, serializers: TEXT_SERIALIZERS };

/**
 * How the cached cluster is made: `initdb` with 1 MB WAL segments (16 MB by
 * default, nearly all zeros), then the template databases dropped (nothing
 * here creates a database) and the log recycled. The tar is then 14 MB
 * instead of 40, and every start unpacks that much less. CKAN's set-up
 * (`DATASTORE_SETUP_SQL`) is made in it too. The name changes when the
 * recipe or the set-up does.
 */
const TEMPLATE_RECIPE = `template-2-${DATASTORE_SETUP_MARK.split(' ').at(-1) ?? ''}`;

async function makeTemplate(dataDir: string | undefined, values: Values): Promise<PGlite> {
  const pg = await PGlite.create({
    ...(dataDir === undefined ? {} : { dataDir }),
    ...values,
    initDbStartParams: ['--wal-segsize=1'],
    startParams: [...START_PARAMS, '-c', 'min_wal_size=2MB'],
  });
  for (const name of ['template0', 'template1']) {
    await pg.exec(`ALTER DATABASE ${name} IS_TEMPLATE false`);
    await pg.exec(`DROP DATABASE ${name}`);
  }
  // CKAN's set-up, made once here rather than at every start.
  await pg.transaction(async (tx) => {
    for (const sql of [...DATASTORE_SETUP_SQL, DATASTORE_SETUP_MARK_SQL]) await tx.query(sql);
  });
  // Each checkpoint lets the next one recycle the segments before it.
  for (let round = 0; round < 2; round++) {
    await pg.query('SELECT pg_switch_wal()');
    await pg.exec('CHECKPOINT');
  }
  return pg;
}

/**
 * A tar held in memory, as PGlite's `loadDataDir` reads it (it asks only
 * for the bytes and the type). Node's own `Blob` hands its bytes back
 * through a stream in small pieces, which cost most of a second for 14 MB.
 */
function tarOf(bytes: Buffer): Blob {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const buffer = (whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer;
  return { type: 'application/x-tar', size: bytes.byteLength, arrayBuffer: async () => buffer } as Blob;
}

/**
 * A fresh database (in memory, or in `dataDir` when it holds none yet).
 * Most of PGlite's start-up is `initdb`; a new cluster is the same every
 * time, so one is kept in the user's cache (`$XDG_CACHE_HOME/ckql` or
 * `~/.cache/ckql`, per PGlite version and recipe) and later starts load it.
 * Any trouble with the cache falls back to a plain start.
 */
async function freshDatabase(dataDir: string | undefined, values: Values): Promise<PGlite> {
  const where = dataDir === undefined ? {} : { dataDir };
  const file = await templateFile();
  if (file !== undefined) {
    try {
      const template = await readFile(file);
      return await PGlite.create({ ...where, loadDataDir: tarOf(template), ...values, startParams: [...START_PARAMS] });
    } catch {
      // a missing or broken template: start from initdb (and write a new one)
    }
  }
  const pg = await makeTemplate(dataDir, values);
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
    return join(cache, 'ckql', `pglite-${pkg.version ?? 'unknown'}-${TEMPLATE_RECIPE}.tar`);
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
 * A fresh PGlite in memory, started from the cached cluster as `openPglite`'s
 * are (CKAN's set-up included), with PGlite's own value parsers and
 * serializers unless others are given: for code that talks to PGlite itself
 * rather than through a `Db`.
 * @example
 * const pg = await startPglite();
 * await pg.query('SELECT lower($1)', ['ÅB']);
 */
export function startPglite(values: Values = {}): Promise<PGlite> {
  return freshDatabase(undefined, values);
}

/**
 * A fresh PGlite in memory that reads values as `openPglite`'s do (as
 * PostgreSQL's text), for `pgliteDb`.
 * @example
 * const db = pgliteDb(await startTextPglite());
 */
export function startTextPglite(): Promise<PGlite> {
  return freshDatabase(undefined, TEXT_VALUES);
}

/**
 * Where a database opened by `openPglite` lives: in memory, fresh or from a
 * tar of a data directory (`dumpDataDir`), or kept in a directory (created
 * when missing).
 */
export interface PgliteHome {
  readonly dataDir?: string;
  /** a data directory as a tar; opened in memory (with no `dataDir`) */
  readonly image?: ArrayBuffer;
}

/**
 * A PGlite as `openPglite`'s thread runs it (values as PostgreSQL's text):
 * fresh in memory, from an image, or the one kept in `dataDir`.
 * @example
 * const pg = await startTextPgliteAt({ dataDir: './ckql-db' });
 */
export async function startTextPgliteAt(home: PgliteHome): Promise<PGlite> {
  if (home.image !== undefined && home.dataDir === undefined) {
    return PGlite.create({ loadDataDir: tarOf(Buffer.from(home.image)), ...TEXT_VALUES, startParams: [...START_PARAMS] });
  }
  const { dataDir } = home;
  return dataDir === undefined || !(await holdsDatabase(dataDir))
    ? freshDatabase(dataDir, TEXT_VALUES)
    : PGlite.create({ dataDir, ...TEXT_VALUES, startParams: [...START_PARAMS] });
}

/**
 * A started PGlite as a `Db` (one started by `openPglite`'s way, values as
 * text: `startTextPglite`); closing the `Db` closes PGlite.
 * @example
 * const db = pgliteDb(await startTextPglite());
 * await db.transaction((tx) => tx.query('SELECT 1'));
 */
export function pgliteDb(pg: PGlite): Db {
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
