/**
 * The `postgres` engine: a PostgreSQL server by URL (docs/engines.md), e.g. a
 * CKAN datastore database or a copy of one, served as it is and read-only
 * (searches run in READ ONLY transactions); `ckql load` writes to it.
 */
import type { SqlEngine } from '../sql/engine.js';
import { sqlEngine } from '../sql/engine.js';
import { openPostgres } from './db.js';
import type { PostgresOptions } from './db.js';

/**
 * Options of `postgresEngine`.
 * @example
 * await postgresEngine({ url: 'postgres://reader@db/datastore', statementTimeout: 10_000 });
 */
export interface PostgresEngineOptions extends PostgresOptions {
  /** `statement_timeout` of a search, ms; default 60 000 (CKAN's) */
  readonly statementTimeout?: number;
  /** the functions `datastore_search_sql` may call (`SqlEngineOptions`); default CKAN's list */
  readonly allowedSqlFunctions?: Iterable<string>;
}

/**
 * Connects to a datastore database and answers from its tables.
 * Rejects with `DatastoreError` `CONNECTION_FAILED` (exit 4 in the CLI) when no connection works.
 * @example
 * const engine = await postgresEngine({ url: 'postgres://reader@127.0.0.1/datastore' });
 * (await engine.resources()).length;
 * await engine.close();
 */
export async function postgresEngine(options: PostgresEngineOptions = {}): Promise<SqlEngine> {
  const db = await openPostgres(options);
  return sqlEngine(db, {
    kind: 'postgres',
    label: `postgres (${db.where})`,
    ...(options.statementTimeout === undefined ? {} : { statementTimeout: options.statementTimeout }),
    ...(options.allowedSqlFunctions === undefined ? {} : { allowedSqlFunctions: options.allowedSqlFunctions }),
  });
}
