/**
 * `openEngine`: the one way the session and embedders get an engine, by
 * name (docs/engines.md): `memory` over files, `pglite` over files (a fresh
 * embedded database, or one kept in `db`), `postgres` over a server (`db`
 * is its URL; unset parts come from the `PG*` environment variables).
 */
import { toolError } from '../errors.js';
import type { ToolError } from '../errors.js';
import { memoryEngine } from './memory/engine.js';
import { loadResources } from './node/load-resources.js';
import type { Engine, EngineKind } from './types.js';
import type { InferMode } from './declared.js';
import type { InvalidUtf8 } from './types.js';

export interface OpenEngineOptions {
  /** default `memory`, or `postgres` when `db` is a `postgres://` URL */
  readonly engine?: EngineKind;
  /** CSV/JSON files or folders to load */
  readonly data?: readonly string[];
  /** `pglite`: a directory that keeps the database; `postgres`: its URL */
  readonly db?: string;
  /** resources (ids or aliases) to mark private */
  readonly private?: readonly string[];
  /** a fields file declaring the one data file (engine/declared.ts); default: a `<name>.fields.json` beside each */
  readonly fields?: string;
  /** how columns nobody declared are typed: `ckql` (default), `xloader` or `datapusher` */
  readonly infer?: InferMode;
  /** bytes that are not UTF-8 in a data file: `refuse` (default) or `replace` (each read as U+FFFD) */
  readonly invalidUtf8?: InvalidUtf8;
  /** `statement_timeout` of a search on a PostgreSQL engine, ms */
  readonly statementTimeout?: number;
  /** `pglite`: the threads that answer (`pgliteEngine`'s `threads`); default 1 */
  readonly threads?: number;
  /**
   * The functions `datastore_search_sql` may call on a PostgreSQL engine, one
   * name per item (CKAN's `ckan.datastore.sqlsearch.allowed_functions_file`);
   * default CKAN's own list
   */
  readonly allowedSqlFunctions?: Iterable<string>;
  /**
   * told of each data file that cannot be read: it is skipped and the others
   * are served (`loadResources`' option); without it the first stops the open
   */
  readonly onBadFile?: (error: ToolError) => void;
}

/**
 * Opens an engine over local files or a database.
 * @example
 * const engine = await openEngine({ engine: 'memory', data: ['examples/data'] });
 * (await engine.resources()).map((r) => r.aliases[0]); // → ['courses', 'enrolments', 'schools']
 * const pg = await openEngine({ engine: 'pglite', data: ['examples/data'] }); // answers as a portal does
 * const server = await openEngine({ db: 'postgres://reader@db.example.org/datastore' });
 */
export async function openEngine(options: OpenEngineOptions = {}): Promise<Engine> {
  const kind = options.engine ?? (options.db !== undefined && /^postgres(ql)?:\/\//.test(options.db) ? 'postgres' : 'memory');
  const paths = options.data ?? [];
  const loadOptions = {
    ...(options.private === undefined ? {} : { private: options.private }),
    ...(options.fields === undefined ? {} : { fields: options.fields }),
    ...(options.infer === undefined ? {} : { infer: options.infer }),
    ...(options.invalidUtf8 === undefined ? {} : { invalidUtf8: options.invalidUtf8 }),
    ...(options.onBadFile === undefined ? {} : { onBadFile: options.onBadFile }),
  };
  const timeout = {
    ...(options.statementTimeout === undefined ? {} : { statementTimeout: options.statementTimeout }),
    ...(options.allowedSqlFunctions === undefined ? {} : { allowedSqlFunctions: options.allowedSqlFunctions }),
  };
  switch (kind) {
    case 'memory': {
      if (options.db !== undefined) throw toolError('USAGE', ['--db names a database; the memory engine reads files (--data); add --engine pglite or --engine postgres']);
      return memoryEngine(await loadResources(paths, loadOptions), `memory (${paths.join(', ') || 'no data'})`);
    }
    // The PostgreSQL engines load on demand: PGlite's module alone costs ~0.2 s of start-up.
    case 'pglite': {
      const { pgliteEngine } = await import('./pglite/engine.js');
      return pgliteEngine({ ...(options.db === undefined ? {} : { dataDir: options.db }), files: paths, load: loadOptions, ...timeout, ...(options.threads === undefined ? {} : { threads: options.threads }) });
    }
    case 'postgres': {
      const { postgresEngine } = await import('./postgres/engine.js');
      const { loadFiles } = await import('./sql/load-files.js');
      const engine = await postgresEngine({ ...(options.db === undefined ? {} : { url: options.db }), ...timeout });
      if (paths.length > 0) {
        // Files given with a server are loaded into it (replacing resources of the same name).
        try {
          await loadFiles(engine.db, paths, { ...loadOptions, replace: true });
          await engine.refresh();
        } catch (error) {
          await engine.close();
          throw error;
        }
      }
      return engine;
    }
  }
}
