/**
 * The `pglite` engine: PostgreSQL in the process (docs/engines.md). A fresh
 * database loaded from files, or one kept in a directory between runs; it
 * answers as a CKAN portal does, with nothing installed.
 */
import type { Table } from '../../datastore/types.js';
import type { SqlEngine } from '../sql/engine.js';
import { sqlEngine } from '../sql/engine.js';
import { loadTables } from '../sql/load.js';
import { loadFiles } from '../sql/load-files.js';
import type { LoadFilesOptions } from '../sql/load-files.js';
import { openPglite } from './thread-db.js';

/**
 * Options of `pgliteEngine`.
 * @example
 * await pgliteEngine({ tables: await loadResources('examples/data') });
 */
export interface PgliteEngineOptions {
  /** keep the database in this directory (created when missing); default: in memory */
  readonly dataDir?: string;
  /** tables to load (replacing tables of the same id) before answering */
  readonly tables?: readonly Table[];
  /** data files or folders to load (replacing resources of the same name), streamed as `ckql load` does */
  readonly files?: readonly string[];
  /** how to load `tables` and `files`; CKAN's full-text indexes default to on for a kept database, off in memory */
  readonly load?: Omit<LoadFilesOptions, 'replace' | 'alias'>;
  /** `statement_timeout` of a search, ms */
  readonly statementTimeout?: number;
  /**
   * threads that answer (`openPglite`): one holds the database, the others
   * answer searches from a copy of it, so a long statement holds up only
   * its own; each costs the database's size in memory again. Default 1.
   */
  readonly threads?: number;
  /** the functions `datastore_search_sql` may call (`SqlEngineOptions`); default CKAN's list */
  readonly allowedSqlFunctions?: Iterable<string>;
}

/**
 * Opens PGlite, loads `tables` into it in CKAN's layout, and answers.
 * @example
 * const engine = await pgliteEngine({ files: ['examples/data'] });
 * (await engine.search({ resource_id: 'courses', q: 'algebra', fields: ['title'] })).records;
 * await engine.close();
 */
export async function pgliteEngine(options: PgliteEngineOptions = {}): Promise<SqlEngine> {
  const db = await openPglite(options.dataDir, options.threads === undefined ? {} : { threads: options.threads });
  try {
    // A database in memory lives for one run: CKAN's GiST indexes (the slowest part of a load in
    // WebAssembly) would cost more start-up than they save; a kept one gets them.
    const indexes = options.load?.indexes ?? options.dataDir !== undefined;
    if (options.tables !== undefined && options.tables.length > 0) await loadTables(db, options.tables, { ...options.load, indexes, replace: true });
    if (options.files !== undefined && options.files.length > 0) await loadFiles(db, options.files, { ...options.load, indexes, replace: true });
    await db.settle();
  } catch (error) {
    await db.close();
    throw error;
  }
  const where = options.dataDir === undefined ? 'in memory' : options.dataDir;
  return sqlEngine(db, {
    kind: 'pglite',
    label: `pglite (${where})`,
    ...(options.statementTimeout === undefined ? {} : { statementTimeout: options.statementTimeout }),
    ...(options.allowedSqlFunctions === undefined ? {} : { allowedSqlFunctions: options.allowedSqlFunctions }),
  });
}
