/**
 * PGlite (PostgreSQL compiled to WebAssembly, in the process) as a `Db`.
 * One connection: transactions queue behind each other. Values come back as
 * PostgreSQL's text (as from a server with `pg`'s parsers turned off), so
 * both PostgreSQL engines read one form.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { DatastoreError } from '../../errors.js';
import type { Db, SqlRows, SqlSession } from '../sql/db.js';

/** Every type PGlite would parse, read as text instead. */
const TEXT_PARSERS: Record<number, (text: string) => string> = Object.fromEntries(
  Object.values(types as Record<string, unknown>)
    .filter((oid): oid is number => typeof oid === 'number')
    .map((oid) => [oid, (text: string) => text]),
);

/**
 * Opens PGlite: a fresh database in memory, or the one kept in `dataDir`
 * (created when missing).
 * @example
 * const db = await openPglite();            // in memory, gone at close
 * const kept = await openPglite('./ckql-db'); // kept between runs
 */
export async function openPglite(dataDir?: string): Promise<Db> {
  const pg = await PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), parsers: TEXT_PARSERS });
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
    transaction: async (work, options = {}) => {
      const aborted = (): DatastoreError => new DatastoreError('ABORTED', 'the search was cancelled');
      if (options.signal?.aborted === true) throw aborted();
      return pg.transaction(async (tx) => {
        if (options.readOnly === true) await tx.query('SET TRANSACTION READ ONLY');
        const inner = session(tx);
        // A statement runs to its end in the process; the signal is checked between statements.
        return work({
          query: async (sql, params) => {
            if (options.signal?.aborted === true) throw aborted();
            return inner.query(sql, params);
          },
          copyFrom: inner.copyFrom,
        });
      });
    },
    close: () => pg.close(),
  };
}
